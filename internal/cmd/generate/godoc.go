package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// modulePath is this module's import path: a package's sources are its import path's rest under
// the repository root.
const modulePath = "github.com/asyncagents/asyncagents"

// docs holds the doc comments of a package's exported types, their fields and its constants and
// variables, so the TypeScript says what the Go says.
type docs struct {
	types  map[string]string            // type name → its doc
	fields map[string]map[string]string // type name → field name → its doc
	values map[string]string            // constant or variable name → its doc
}

// docSet reads the docs of each package once, as the types met ask for them: the core's types
// may sit in more than one package.
type docSet struct {
	root string
	pkgs map[string]*docs
	err  error
}

func newDocSet(root string) *docSet { return &docSet{root: root, pkgs: map[string]*docs{}} }

// of returns the docs of the package at importPath; a package that cannot be read has none, and
// the error is kept for the caller.
func (s *docSet) of(importPath string) *docs {
	if d, ok := s.pkgs[importPath]; ok {
		return d
	}
	d, err := readDocs(s.root, importPath)
	if err != nil {
		s.err = err
		d = &docs{types: map[string]string{}, fields: map[string]map[string]string{}, values: map[string]string{}}
	}
	s.pkgs[importPath] = d
	return d
}

// value is the doc of a constant or variable, looked up in every package read so far.
func (s *docSet) value(name string) string {
	for _, d := range s.pkgs {
		if v := d.values[name]; v != "" {
			return v
		}
	}
	return ""
}

// readDocs parses the non-test Go files of the package at importPath under root.
func readDocs(root, importPath string) (*docs, error) {
	dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(importPath, modulePath), "/")))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	d := &docs{types: map[string]string{}, fields: map[string]map[string]string{}, values: map[string]string{}}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					d.types[s.Name.Name] = firstOf(s.Doc, g.Doc)
					st, ok := s.Type.(*ast.StructType)
					if !ok {
						continue
					}
					fields := map[string]string{}
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							fields[n.Name] = firstOf(fl.Doc, fl.Comment)
						}
					}
					d.fields[s.Name.Name] = fields
				case *ast.ValueSpec:
					own := []*ast.CommentGroup{s.Doc, s.Comment}
					if len(g.Specs) == 1 {
						own = append(own, g.Doc)
					}
					for _, n := range s.Names {
						d.values[n.Name] = firstOf(own...)
					}
				}
			}
		}
	}
	return d, nil
}

// firstOf is the text of the first comment group given.
func firstOf(groups ...*ast.CommentGroup) string {
	for _, g := range groups {
		if t := strings.TrimSpace(g.Text()); t != "" {
			return t
		}
	}
	return ""
}

// jsDoc renders text as a JSDoc comment at indent, or nothing.
func jsDoc(text, indent string) string {
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		return indent + "/** " + strings.ReplaceAll(text, "*/", "* /") + " */\n"
	}
	var b strings.Builder
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		l = strings.ReplaceAll(l, "*/", "* /")
		if l == "" {
			b.WriteString(indent + " *\n")
		} else {
			b.WriteString(indent + " * " + l + "\n")
		}
	}
	b.WriteString(indent + " */\n")
	return b.String()
}
