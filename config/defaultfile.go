package config

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:generate go test -run TestSettingDocsCurrent -update-docs .

// settingDoc is one row of docs/config.md's config.toml table. settingDocs (docs_gen.go) is
// generated from that table, so the file `snarkd run` writes says what the documentation says.
type settingDoc struct {
	Key     string // TOML path, e.g. "API.ListenAddress"
	Env     string // environment variable that overrides it
	Default string // the default as the documentation words it, e.g. "0 (no limit)"
	Meaning string // what it does (Markdown)
}

// commentWidth is the widest comment line in the written file.
const commentWidth = 100

// DefaultFile renders the config.toml that `snarkd run` writes on first start: every setting
// at its default value, each preceded by comments giving its meaning, default and environment
// variable (docs/config.md's table; the variable is the one the code reads).
func DefaultFile() ([]byte, error) {
	docs := make(map[string]settingDoc, len(settingDocs))
	for _, d := range settingDocs {
		docs[d.Key] = d
	}
	var buf bytes.Buffer
	buf.WriteString(`# snarkd configuration, written by "snarkd run" on first start with every setting at its
# default. Later sources win: built-in defaults, this file, SNARKD_* environment variables
# (named below), command-line flags. Delete a line to follow the built-in default of the
# running version; an unknown key stops the daemon at start. docs/config.md has the details.
`)
	def := Default()
	section := ""
	err := walkEnv(reflect.ValueOf(&def).Elem(), "", func(f reflect.Value, key, env string) error {
		sec, name, _ := strings.Cut(key, ".")
		if sec != section {
			section = sec
			fmt.Fprintf(&buf, "\n[%s]\n", sec)
		}
		// A setting without a row (the tests fail on one) is still written: a daemon must not
		// refuse to start over documentation.
		d, ok := docs[key]
		if !ok {
			d = settingDoc{Meaning: "see docs/config.md", Default: "as written below"}
		}
		buf.WriteString("\n")
		meaning := plainText(d.Meaning)
		if !strings.HasSuffix(meaning, ".") {
			meaning += "."
		}
		writeComment(&buf, name+": "+meaning)
		writeComment(&buf, "Default: "+plainText(d.Default)+". Environment: "+env+".")
		line, err := tomlLine(name, f)
		if err != nil {
			return fmt.Errorf("encoding default of %s: %w", key, err)
		}
		buf.WriteString(line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tomlLine renders one setting as "Name = value\n". An empty list is written commented out:
// toml decodes "[]" to an empty slice, not the nil the default holds, and the file must read
// back as the defaults.
func tomlLine(name string, f reflect.Value) (string, error) {
	if f.Kind() == reflect.Slice && f.Len() == 0 {
		return "# " + name + " = []\n", nil
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{name: f.Interface()}); err != nil {
		return "", err
	}
	return b.String(), nil
}

var mdLink = regexp.MustCompile(`\[([^\]]+)\]\(([^)]+)\)`)

// plainText turns the documentation's Markdown into comment text: links keep their text, and
// a link to another document names it (relative to docs/), since the file has no links.
func plainText(md string) string {
	return mdLink.ReplaceAllStringFunc(md, func(m string) string {
		sub := mdLink.FindStringSubmatch(m)
		text, target := sub[1], sub[2]
		if strings.HasPrefix(target, "#") || strings.Trim(text, "`") == target || strings.HasPrefix(target, "http") {
			return text
		}
		if rest, ok := strings.CutPrefix(target, "../"); ok {
			return text + " (" + rest + ")"
		}
		return text + " (docs/" + target + ")"
	})
}

// writeComment writes text as "# " lines of at most commentWidth columns (a longer word gets a
// line of its own).
func writeComment(buf *bytes.Buffer, text string) {
	line := "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > commentWidth && line != "#" {
			buf.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	buf.WriteString(line + "\n")
}
