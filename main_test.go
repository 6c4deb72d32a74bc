package main

import (
	"testing"
	"testing/fstest"
)

func TestCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{
			name:  "a container with its own cgroup namespace",
			files: map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "268435456\n"},
			want:  268435456, ok: true,
		},
		{
			name: "a process in a cgroup of the host's tree",
			files: map[string]string{
				"proc/self/cgroup": "0::/kubepods.slice/pod1/cri-abc\n",
				"sys/fs/cgroup/kubepods.slice/pod1/cri-abc/memory.max": "536870912\n",
				"sys/fs/cgroup/memory.max":                             "1024\n",
			},
			want: 536870912, ok: true,
		},
		{
			name:  "no limit",
			files: map[string]string{"proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "max\n"},
		},
		{
			name: "cgroup v1 in a container: the host's path, the container's cgroup at the top",
			files: map[string]string{
				"proc/self/cgroup":                           "12:memory:/kubepods/burstable/pod1/abc\n1:name=systemd:/kubepods/burstable/pod1/abc\n0::/\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n",
			},
			want: 268435456, ok: true,
		},
		{
			name: "cgroup v1 on the host",
			files: map[string]string{
				"proc/self/cgroup": "4:memory:/process_api/x\n0::/\n",
				"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "1073741824\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes":               "9223372036854771712\n",
			},
			want: 1073741824, ok: true,
		},
		{
			name: "cgroup v1 without a limit",
			files: map[string]string{
				"proc/self/cgroup":                           "4:cpu,memory:/\n",
				"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
			},
		},
		{
			name:  "no memory controller",
			files: map[string]string{"proc/self/cgroup": "0::/x\n"},
		},
		{name: "no proc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tc.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			got, ok := cgroupMemoryLimit(fsys)
			if got != tc.want || ok != tc.ok {
				t.Errorf("cgroupMemoryLimit() = %d, %v; want %d, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
