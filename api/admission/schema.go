package admission

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/config/crd"
)

// crdSchema is what the API server derives from one version of a CustomResourceDefinition to
// decode, default and validate its objects. `almanac validate` uses the same libraries on the
// same CRDs (embedded from config/crd/bases), so that it never admits what the API server
// would refuse.
type crdSchema struct {
	gvk        schema.GroupVersionKind
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
	status     bool // the status subresource is enabled: create drops status
	namespaced bool // the kind's objects live in a namespace (ClusterCalendar's do not)
}

// loadSchemas reads the embedded CRDs once.
var loadSchemas = sync.OnceValues(func() (map[schema.GroupVersionKind]*crdSchema, error) {
	return readSchemas(crd.Bases)
})

func readSchemas(fsys fs.FS) (map[schema.GroupVersionKind]*crdSchema, error) {
	files, err := fs.Glob(fsys, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[schema.GroupVersionKind]*crdSchema{}
	for _, file := range files {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &def); err != nil {
			return nil, fmt.Errorf("failed to read the CustomResourceDefinition %s: %w", file, err)
		}
		for _, v := range def.Spec.Versions {
			if v.Schema == nil || !v.Served {
				continue
			}
			s, err := newCRDSchema(def.Spec.Group, def.Spec.Names.Kind, &v)
			if err != nil {
				return nil, fmt.Errorf("failed to load the schema of %s %s: %w", def.Name, v.Name, err)
			}
			s.status = v.Subresources != nil && v.Subresources.Status != nil
			s.namespaced = def.Spec.Scope != apiextensionsv1.ClusterScoped
			out[s.gvk] = s
		}
	}
	return out, nil
}

// newCRDSchema prepares one version's schema as the API server's custom resource handler does
// (apiextensions-apiserver/pkg/apiserver/customresource_handler.go).
func newCRDSchema(group, kind string, v *apiextensionsv1.CustomResourceDefinitionVersion) (*crdSchema, error) {
	internal := &apiextensionsinternal.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	structural = structural.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(structural); err != nil {
		return nil, err
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, err
	}
	return &crdSchema{
		gvk:        schema.GroupVersionKind{Group: group, Version: v.Name, Kind: kind},
		structural: structural,
		validator:  validator,
		cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}, nil
}

// decodeStrict prunes what the schema does not declare, as the API server does when it
// decodes a request, and returns the pruned fields as errors: kubectl asks for strict field
// validation by default (--validate=strict), which rejects them.
func (s *crdSchema) decodeStrict(obj map[string]any) field.ErrorList {
	var unknown []string
	if _, _, paths, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true}); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), obj["metadata"], err.Error())}
	} else {
		unknown = append(unknown, paths...)
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s.structural)
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, s.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if ferr != nil {
		return field.ErrorList{ferr}
	}
	unknown = append(unknown, paths...)
	slices.Sort(unknown)
	var errs field.ErrorList
	for _, path := range slices.Compact(unknown) {
		errs = append(errs, s.unknownFieldError(path))
	}
	return errs
}

var indexSuffix = regexp.MustCompile(`\[[0-9]+\]$`)

// unknownFieldError says that path is not in the schema and suggests the field probably
// meant.
func (s *crdSchema) unknownFieldError(path string) *field.Error {
	parent, name := "", path
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		parent, name = path[:i], path[i+1:]
	}
	detail := fmt.Sprintf("unknown field %q: the %s schema has no such field here", name, s.gvk.Kind)
	candidates := propertiesOf(schemaAt(s.structural, parent))
	if len(candidates) == 0 && (parent == "metadata" || strings.HasSuffix(parent, ".metadata")) {
		candidates = objectMetaFields // the schema leaves ObjectMeta to the API server
	}
	if suggestion := closest(candidates, name); suggestion != "" {
		detail += fmt.Sprintf(" (did you mean %q?)", suggestion)
	}
	detail += "; the API server rejects it under strict field validation, kubectl's default"
	return field.Forbidden(pathOf(path), detail)
}

// schemaAt returns the schema of the object at a dotted path such as
// "spec.jobTemplate.spec.template.spec.containers[0]", or nil.
func schemaAt(s *structuralschema.Structural, path string) *structuralschema.Structural {
	if path == "" {
		return s
	}
	for _, seg := range strings.Split(path, ".") {
		name := indexSuffix.ReplaceAllString(seg, "")
		if s == nil {
			return nil
		}
		if p, ok := s.Properties[name]; ok {
			s = &p
		} else {
			return nil
		}
		for range strings.Count(seg, "[") {
			if s.Items == nil {
				return nil
			}
			s = s.Items
		}
	}
	return s
}

func propertiesOf(s *structuralschema.Structural) []string {
	if s == nil {
		return nil
	}
	return slices.Collect(maps.Keys(s.Properties))
}

// objectMetaFields are the JSON names of metav1.ObjectMeta's fields.
var objectMetaFields = func() []string {
	var names []string
	t := reflect.TypeFor[metav1.ObjectMeta]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}()

// closest returns the candidate nearest to name, within two edits, or "".
func closest(candidates []string, name string) string {
	best, bestDistance := "", 3 // suggest only names within two edits
	for _, candidate := range candidates {
		d := timing.EditDistance(strings.ToLower(name), strings.ToLower(candidate))
		if d < bestDistance || (d == bestDistance && candidate < best) {
			best, bestDistance = candidate, d
		}
	}
	return best
}

// pathOf turns "spec.containers[0].name" into a field.Path.
func pathOf(s string) *field.Path {
	var p *field.Path
	for _, seg := range strings.Split(s, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if p == nil {
			p = field.NewPath(name)
		} else {
			p = p.Child(name)
		}
		for rest != "" {
			var idx string
			idx, rest, _ = strings.Cut(rest, "]")
			if n, err := strconv.Atoi(idx); err == nil {
				p = p.Index(n)
			}
			rest = strings.TrimPrefix(rest, "[")
		}
	}
	return p
}

// applyDefaults writes the schema's defaults, as the API server does after decoding and again
// after the mutating webhooks.
func (s *crdSchema) applyDefaults(obj map[string]any) {
	structuraldefaulting.Default(obj, s.structural)
}

// prepareForCreate drops status, which a create cannot set when the status subresource is
// enabled.
func (s *crdSchema) prepareForCreate(obj map[string]any) {
	if s.status {
		delete(obj, "status")
	}
}

// validate runs the API server's validation of a custom resource on create: metadata, the
// OpenAPI schema, embedded resources, list types and, unless an earlier error makes them
// meaningless, the CEL rules (apiextensions-apiserver/pkg/registry/customresource).
func (s *crdSchema) validate(ctx context.Context, obj map[string]any) field.ErrorList {
	if errs := s.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	meta := &metav1.ObjectMeta{}
	if raw, ok := obj["metadata"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, meta); err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
		}
	}
	errs = append(errs, metavalidation.ValidateObjectMeta(meta, s.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, s.validator)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, s.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	celErrs, _ := s.cel.Validate(ctx, nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// validateUpdate runs the API server's validation of an update of a custom resource from old
// to obj, with the ratcheting of the schema's rules that the API server applies (errors in
// fields that did not change are dropped) (apiextensions-apiserver/pkg/registry/customresource).
func (s *crdSchema) validateUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	if errs := s.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	meta, oldMeta := &metav1.ObjectMeta{}, &metav1.ObjectMeta{}
	for _, m := range []struct {
		raw  any
		into *metav1.ObjectMeta
	}{{obj["metadata"], meta}, {old["metadata"], oldMeta}} {
		if raw, ok := m.raw.(map[string]any); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, m.into); err != nil {
				return field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
			}
		}
	}
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: s.structural})
	var errs field.ErrorList
	errs = append(errs, metavalidation.ValidateObjectMetaUpdate(meta, oldMeta, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, s.validator, apiservervalidation.WithRatcheting(correlated))...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, s.structural, false)...)
	if oldErrs := listtype.ValidateListSetsAndMaps(nil, s.structural, old); len(oldErrs) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	celErrs, _ := s.cel.Validate(ctx, nil, s.structural, obj, old, celconfig.RuntimeCELCostBudget, cel.WithRatcheting(correlated))
	return append(errs, celErrs...)
}

func (s *crdSchema) validateTypeMeta(obj map[string]any) field.ErrorList {
	var errs field.ErrorList
	if kind, _ := obj["kind"].(string); kind != s.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), kind, "must be "+s.gvk.Kind))
	}
	if apiVersion, _ := obj["apiVersion"].(string); apiVersion != s.gvk.GroupVersion().String() {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), apiVersion, "must be "+s.gvk.GroupVersion().String()))
	}
	return errs
}
