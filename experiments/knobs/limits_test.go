package knobs
