//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// snapshot is what a cluster could change on the machine, section by section, as sorted
// lines (or a line per process that looks like a cluster component).
type snapshot map[string][]string

// volatileSysctl are sysctls the kernel changes by itself.
var volatileSysctl = regexp.MustCompile(`^(fs\.(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota\.)|kernel\.(ns_last_pid|random\.|pty\.nr)|net\.netfilter\.nf_conntrack_count)`)

// nodeProcess are the names of the node's programs; the control plane's are known by the
// state folder on their command lines.
var nodeProcess = regexp.MustCompile(`^(containerd|containerd-shim.*|runc|kubelet|kube-proxy|pause)$`)

// outsidePaths are folders the kubelet, containerd and the CNI plugins may write whatever
// their configuration says.
var outsidePaths = []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/var/lib/cni", "/run/containerd", "/etc/cni", "/opt/cni", "/var/lib/containerd", "/run/netns", "/var/run/netns"}

func takeSnapshot() (snapshot, error) {
	s := snapshot{}
	out := func(section string, name string, args ...string) error {
		b, err := exec.Command(name, args...).Output()
		if err != nil {
			if _, lookErr := exec.LookPath(name); lookErr != nil {
				return nil // not installed: nothing of it to change
			}
			return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		s.add(section, string(b))
		return nil
	}
	for _, c := range []struct {
		section string
		cmd     []string
	}{
		{"links", []string{"ip", "-o", "link", "show"}},
		{"addresses", []string{"ip", "-o", "addr", "show"}},
		{"routes", []string{"ip", "route", "show", "table", "all"}},
		{"routes (IPv6)", []string{"ip", "-6", "route", "show", "table", "all"}},
		{"network namespaces", []string{"ip", "netns", "list"}},
		{"iptables", []string{"iptables-save"}},
		{"ip6tables", []string{"ip6tables-save"}},
		{"nftables", []string{"nft", "list", "ruleset"}},
	} {
		if err := out(c.section, c.cmd[0], c.cmd[1:]...); err != nil {
			return nil, err
		}
	}
	s["links"] = mapLines(s["links"], func(l string) string {
		// "3: name@peer: <FLAGS> mtu … state UP …": the name and flags, not counters.
		f := strings.Fields(l)
		if len(f) < 3 {
			return l
		}
		return f[1] + " " + f[2]
	})
	s["addresses"] = mapLines(s["addresses"], func(l string) string {
		f := strings.Fields(l)
		if len(f) < 4 {
			return l
		}
		return strings.Join(f[1:4], " ")
	})
	for _, sec := range []string{"iptables", "ip6tables"} {
		s[sec] = mapLines(s[sec], func(l string) string {
			if strings.HasPrefix(l, "#") {
				return ""
			}
			return regexp.MustCompile(`\[\d+:\d+\]`).ReplaceAllString(l, "")
		})
	}

	sysctls, err := exec.Command("sysctl", "-a").Output()
	if err != nil && len(sysctls) == 0 {
		return nil, fmt.Errorf("sysctl -a: %w", err)
	}
	for _, l := range strings.Split(string(sysctls), "\n") {
		if l != "" && !volatileSysctl.MatchString(l) {
			s["sysctls"] = append(s["sysctls"], strings.Join(strings.Fields(l), " "))
		}
	}

	controllers, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, c := range controllers {
		entries, _ := os.ReadDir(c)
		for _, e := range entries {
			if e.IsDir() {
				s["cgroups"] = append(s["cgroups"], filepath.Join(c, e.Name()))
			}
		}
	}

	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(l); len(f) > 4 {
			s["mounts"] = append(s["mounts"], f[4])
		}
	}

	for _, p := range outsidePaths {
		if _, err := os.Lstat(p); err == nil {
			s["folders"] = append(s["folders"], p)
			entries, _ := os.ReadDir(p)
			for _, e := range entries {
				s["folders"] = append(s["folders"], filepath.Join(p, e.Name()))
			}
		}
	}

	s["processes"] = clusterProcesses()
	for k := range s {
		s[k] = sortedUnique(s[k])
	}
	return s, nil
}

// clusterProcesses lists the running processes that look like the cluster's: the node's
// programs by name, the others by the state folder on their command line, and containers'
// by a root folder that is not the machine's.
func clusterProcesses() []string {
	self := os.Getpid()
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(comm))
		root, _ := os.Readlink(filepath.Join("/proc", e.Name(), "root"))
		raw, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cmdline := strings.TrimSpace(string(bytes.ReplaceAll(raw, []byte{0}, []byte{' '})))
		if !nodeProcess.MatchString(name) && (root == "/" || root == "") && !strings.Contains(cmdline, cluster.dir) {
			continue
		}
		out = append(out, fmt.Sprintf("pid %d %s: %s", pid, name, cmdline))
	}
	return out
}

func (s snapshot) add(section, text string) {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			s[section] = append(s[section], l)
		}
	}
}

func mapLines(lines []string, f func(string) string) []string {
	var out []string
	for _, l := range lines {
		if m := f(l); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func sortedUnique(lines []string) []string {
	slices.Sort(lines)
	return slices.Compact(lines)
}

// diff says, section by section, what after has that s had not, and the reverse.
func (s snapshot) diff(after snapshot) string {
	var b strings.Builder
	sections := map[string]bool{}
	for k := range s {
		sections[k] = true
	}
	for k := range after {
		sections[k] = true
	}
	names := make([]string, 0, len(sections))
	for k := range sections {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, sec := range names {
		was, now := s[sec], after[sec]
		var added, gone []string
		for _, l := range now {
			if _, found := slices.BinarySearch(was, l); !found {
				added = append(added, l)
			}
		}
		for _, l := range was {
			if _, found := slices.BinarySearch(now, l); !found {
				gone = append(gone, l)
			}
		}
		if len(added)+len(gone) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %s:\n", sec)
		for _, l := range gone {
			fmt.Fprintf(&b, "    - %s\n", l)
		}
		for _, l := range added {
			fmt.Fprintf(&b, "    + %s\n", l)
		}
	}
	return b.String()
}

func (s snapshot) summary() string {
	return fmt.Sprintf("%d sysctls, %d links, %d addresses, %d routes, %d iptables and %d ip6tables lines, %d nftables lines, %d network namespaces, %d cgroups, %d mounts, %d of the cluster's folders, %d cluster processes",
		len(s["sysctls"]), len(s["links"]), len(s["addresses"]), len(s["routes"])+len(s["routes (IPv6)"]), len(s["iptables"]), len(s["ip6tables"]),
		len(s["nftables"]), len(s["network namespaces"]), len(s["cgroups"]), len(s["mounts"]), len(s["folders"]), len(s["processes"]))
}
