package kube

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// PluginBinary is the name under which kubectl runs almanac as its plugin (`kubectl almanac
// ...`): kubectl finds an executable kubectl-almanac on PATH and passes it the arguments that
// follow "almanac". The krew manifest installs the binary under that name.
const PluginBinary = "kubectl-almanac"

// PluginCommand is what a user types to run the plugin.
const PluginCommand = "kubectl almanac"

// Command is how messages tell the user to run almanac's CLI: "almanac", or "kubectl almanac"
// once AsPlugin has made the command tree kubectl's plugin.
var Command = "almanac"

// IsPlugin reports whether argv0 (os.Args[0]) is the plugin's binary: its base name is
// kubectl-almanac (kubectl-almanac.exe on Windows).
func IsPlugin(argv0 string) bool {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	return base == PluginBinary
}

// AsPlugin makes root's usage, help and examples say `kubectl almanac ...` instead of
// `almanac ...`: cobra writes the display name in every command path, and each command's
// examples are rewritten where a line runs almanac.
func AsPlugin(root *cobra.Command) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = PluginCommand
	Command = PluginCommand
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = pluginExamples(c.Example)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// pluginExamples rewrites the lines of examples that run almanac ("  almanac run ...",
// "... | almanac preview -f -") to run it through kubectl.
func pluginExamples(examples string) string {
	lines := strings.Split(examples, "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		indent := l[:len(l)-len(trimmed)]
		switch {
		case strings.HasPrefix(trimmed, "almanac "):
			lines[i] = indent + "kubectl " + trimmed
		case strings.Contains(l, "| almanac "):
			lines[i] = strings.ReplaceAll(l, "| almanac ", "| kubectl almanac ")
		}
	}
	return strings.Join(lines, "\n")
}
