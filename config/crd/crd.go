// Package crd embeds the CustomResourceDefinitions that controller-gen writes to bases/
// (`make manifests`), so that the binary (`almanac validate`) applies exactly the schemas and
// CEL rules that the API server applies, without reading files at run time. This file is the
// only hand-written file under config/; it holds no logic.
package crd

import "embed"

// Bases holds bases/*.yaml, one CustomResourceDefinition per file.
//
//go:embed bases/*.yaml
var Bases embed.FS
