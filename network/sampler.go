package network

import (
	"math/rand/v2"
	"time"
)

// Validate reports the first bad field of d as a *sim.ParamError named param.field, so
// packages that reuse Dist for other durations (a client's hold and think times, pause
// lengths) reject bad input exactly as the network does.
func (d Dist) Validate(param string) error { return d.validate(param) }

// Validate reports the first bad field of l, named param.field.
func (l Latency) Validate(param string) error { return l.validate(param) }

// Sampler is a validated Dist ready to draw from. It lets the rest of the world draw
// durations from the same distributions, with the same code, as the network.
type Sampler struct{ s sampler }

// NewSampler validates d (naming param in errors) and returns its sampler.
func NewSampler(d Dist, param string) (Sampler, error) {
	if err := d.validate(param); err != nil {
		return Sampler{}, err
	}
	return Sampler{newSampler(d)}, nil
}

// Draw returns one value in [0, MaxDuration], drawn from r.
func (s *Sampler) Draw(r *rand.Rand) time.Duration { return s.s.draw(r) }
