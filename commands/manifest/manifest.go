// Package manifest reads Kubernetes manifests the way kubectl does — files, directories
// (optionally recursive), standard input, multi-document YAML or JSON, and List objects —
// for the offline commands `almanac validate`, `almanac preview` and `almanac migrate`; and
// the error by which those commands set the exit status (ExitError).
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/admission"
)

// Document is one object read from the input, with where it came from (File, Index), as
// written (Object) and as JSON (Raw). It is offline admission's input type, so that what Read
// returns goes to admission.Validate as it is.
type Document = admission.Document

// Read reads every object from the given paths. A path is a file, a directory (its *.yaml,
// *.yml and *.json files; all levels below too when recursive) or "-" for stdin. Empty
// documents are skipped. An unreadable file or malformed YAML is an error naming the file and
// document.
func Read(paths []string, recursive bool, stdin io.Reader) ([]Document, error) {
	var docs []Document
	for _, path := range paths {
		if path == "-" {
			got, err := decode("-", stdin)
			if err != nil {
				return nil, err
			}
			docs = append(docs, got...)
			continue
		}
		files, err := expand(path, recursive)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			f, err := os.Open(file) //nolint:gosec // reading the files the user named is the point
			if err != nil {
				return nil, err
			}
			got, err := decode(file, f)
			_ = f.Close()
			if err != nil {
				return nil, err
			}
			docs = append(docs, got...)
		}
	}
	return docs, nil
}

func expand(path string, recursive bool) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && !recursive {
				return fs.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

func decode(file string, r io.Reader) ([]Document, error) {
	var docs []Document
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for index := 0; ; index++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, index, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSONStrict(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, index, err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue // a document of comments only
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, index, err)
		}
		if !obj.IsList() {
			docs = append(docs, Document{File: file, Index: index, Object: obj, Raw: js})
			continue
		}
		list, err := obj.ToList()
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, index, err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			if item.GetKind() == "" {
				// The same rule as for a document: kubectl rejects an item without a kind.
				return nil, fmt.Errorf("%s: document %d: items[%d]: Object 'Kind' is missing; hint: every item of a List names its kind", file, index, i)
			}
			itemJSON, err := item.MarshalJSON()
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: item %d: %w", file, index, i, err)
			}
			docs = append(docs, Document{File: file, Index: index, Object: item, Raw: itemJSON})
		}
	}
}
