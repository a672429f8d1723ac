package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		value string
		count int
		env   map[string]string
		want  Shard
	}{
		{"1/3", 0, nil, Shard{1, 3}},
		{"3/3", 0, nil, Shard{3, 3}},
		{"1/1", 0, nil, Shard{1, 1}},
		{"2/3", 3, nil, Shard{2, 3}},
		{"auto", 4, map[string]string{"JOB_COMPLETION_INDEX": "0"}, Shard{1, 4}},
		{"auto", 4, map[string]string{"JOB_COMPLETION_INDEX": "3"}, Shard{4, 4}},
		{"auto", 4, map[string]string{"SLURM_ARRAY_TASK_ID": "2"}, Shard{3, 4}},
		{"auto", 4, map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1"}, Shard{4, 4}},
		{"auto", 4, map[string]string{"JOB_COMPLETION_INDEX": "1", "SLURM_ARRAY_TASK_ID": "3"}, Shard{2, 4}},
	} {
		got, err := ParseShard("--shard", tc.value, "--shards", tc.count, env(tc.env))
		require.NoError(t, err, "%s %v", tc.value, tc.env)
		assert.Equal(t, tc.want, got)
		assert.Equal(t, tc.want.String(), got.String())
	}
	assert.Equal(t, "1/1", Shard{}.String())
}

func TestParseShardErrors(t *testing.T) {
	for _, tc := range []struct {
		value string
		count int
		env   map[string]string
		param string
		says  string
	}{
		{"3/2", 0, nil, "--shard", "--shard = 3/2: out of range, allowed i/n with 1 ≤ i ≤ n ≤ 1000 (shards count from 1), or auto"},
		{"0/3", 0, nil, "--shard", "--shard = 0/3: out of range"},
		{"1/0", 0, nil, "--shard", "--shard = 1/0"},
		{"0/0", 0, nil, "--shard", "--shard = 0/0"},
		{"-1/3", 0, nil, "--shard", "--shard = -1/3"},
		{"1/1001", 0, nil, "--shard", "--shard = 1/1001"},
		{"a/b", 0, nil, "--shard", "--shard = a/b"},
		{"1/2/3", 0, nil, "--shard", "--shard = 1/2/3"},
		{"2", 0, nil, "--shard", "--shard = 2:"},
		{"", 0, nil, "--shard", "--shard = :"},
		{"1/3", -1, nil, "--shards", "--shards = -1: out of range, allowed [1, 1000]"},
		{"auto", 4, map[string]string{"JOB_COMPLETION_INDEX": "4"}, "JOB_COMPLETION_INDEX", "JOB_COMPLETION_INDEX = 4: out of range, allowed an integer in [0, 3] for --shards 4"},
		{"auto", 4, map[string]string{"JOB_COMPLETION_INDEX": "x"}, "JOB_COMPLETION_INDEX", "JOB_COMPLETION_INDEX = x"},
		{"auto", 4, map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "1"}, "SLURM_ARRAY_TASK_ID", "allowed an integer in [1, 4] (SLURM_ARRAY_TASK_MIN = 1)"},
	} {
		_, err := ParseShard("--shard", tc.value, "--shards", tc.count, env(tc.env))
		require.Error(t, err, tc.value)
		assert.True(t, IsUsage(err))
		var pe *sim.ParamError
		require.ErrorAs(t, err, &pe, "%v", err)
		assert.Equal(t, tc.param, pe.Param)
		assert.Contains(t, err.Error(), tc.says)
	}
	for _, tc := range []struct {
		value string
		count int
		env   map[string]string
		says  string
	}{
		{"auto", 0, map[string]string{"JOB_COMPLETION_INDEX": "1"}, "--shard = auto needs the number of shards in --shards"},
		{"auto", 3, nil, "neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (Slurm job array) is set"},
		{"2/3", 4, nil, "--shard = 2/3 and --shards = 4 disagree"},
	} {
		_, err := ParseShard("--shard", tc.value, "--shards", tc.count, env(tc.env))
		assert.True(t, IsUsage(err))
		assert.ErrorContains(t, err, tc.says)
	}
}
