package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Load reads the YAML file at path, applies environment overrides from env
// (os.Getenv in production), fills defaults and validates the result.
// Relative registry paths are resolved against the file's directory.
func Load(path string, env func(string) string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(raw, filepath.Dir(path), env)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse is Load on bytes; baseDir resolves relative file references.
func Parse(raw []byte, baseDir string, env func(string) string) (*Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	// Defaults that an explicit zero must be able to turn off are set
	// before decoding (the file's value, 0s included, then wins).
	cfg := Config{API: API{CacheTTL: Duration(time.Minute), CacheStale: Duration(10 * time.Second)}}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w", cleanYAMLError(err))
	}
	applyEnv(&cfg, env)
	for i := range cfg.Chains {
		if err := cfg.Chains[i].applyRegistry(baseDir); err != nil {
			return nil, &FieldError{Key: fmt.Sprintf("chains[%d].registry", i), Line: lineOf(&root, "chains", strconv.Itoa(i), "registry"), Msg: err.Error()}
		}
	}
	if i, err := cfg.IBC.applyRegistry(baseDir); err != nil {
		return nil, &FieldError{Key: fmt.Sprintf("ibc.registry[%d]", i), Line: lineOf(&root, "ibc", "registry", strconv.Itoa(i)), Msg: err.Error()}
	}
	// An EVM chain waits 2 confirmations unless the file sets any number,
	// 0 included (a devnet).
	for i := range cfg.Chains {
		if cfg.Chains[i].IsEVM() && !hasKey(&root, "chains", strconv.Itoa(i), "confirmations") {
			cfg.Chains[i].Confirmations = 2
		}
	}
	cfg.applyDefaults()
	cfg.IBC.applyDefaults(cfg.Chains)
	if errs := cfg.validate(); len(errs) > 0 {
		for _, fe := range errs {
			fe.Line = lineOf(&root, splitKey(fe.Key)...)
		}
		joined := make([]error, len(errs))
		for i, fe := range errs {
			joined[i] = fe
		}
		return nil, errors.Join(joined...)
	}
	return &cfg, nil
}

// FieldError is a problem with one configuration key.
type FieldError struct {
	Key  string // dotted path, e.g. chains[0].rpc[1]
	Line int    // 0 when the key is absent from the file
	Msg  string
}

func (e *FieldError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d): %s", e.Key, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Key, e.Msg)
}

// cleanYAMLError turns yaml.v3's "field x not found in type config.Chain" into
// a message that names the key as the user wrote it.
func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		if i := strings.Index(m, "field "); i >= 0 && strings.Contains(m, " not found in type ") {
			name := m[i+len("field "):]
			name = name[:strings.Index(name, " not found in type ")]
			msgs = append(msgs, m[:i]+"unknown key "+strconv.Quote(name))
			continue
		}
		msgs = append(msgs, m)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// envOverrides maps environment variables to the setting they override.
var envOverrides = []struct {
	name string
	set  func(*Config, string)
}{
	{"DATABASE_URL", func(c *Config, v string) { c.Database.URL = v }},
	{"CHAINLENS_DATABASE_URL", func(c *Config, v string) { c.Database.URL = v }},
	{"CHAINLENS_DATABASE_SESSION_URL", func(c *Config, v string) { c.Database.SessionURL = v }},
	{"CHAINLENS_DATABASE_READ_URLS", func(c *Config, v string) { c.Database.ReadURLs = strings.Fields(v) }},
	{"CHAINLENS_API_LISTEN", func(c *Config, v string) { c.API.Listen = v }},
	{"CHAINLENS_LOG_LEVEL", func(c *Config, v string) { c.Log.Level = v }},
	{"CHAINLENS_LOG_FORMAT", func(c *Config, v string) { c.Log.Format = v }},
	{"CHAINLENS_AGGREGATOR_SCHEDULE", func(c *Config, v string) { c.Aggregator.Schedule = v }},
	{"CHAINLENS_METRICS_LISTEN", func(c *Config, v string) { c.Metrics.Listen = v }},
}

// EnvNames lists the environment variables that override settings.
func EnvNames() []string {
	names := make([]string, len(envOverrides))
	for i, o := range envOverrides {
		names[i] = o.name
	}
	return names
}

func applyEnv(c *Config, env func(string) string) {
	for _, o := range envOverrides {
		if v := env(o.name); v != "" {
			o.set(c, v)
		}
	}
}

func (c *Config) applyDefaults() {
	if c.Engagement.MaxWalletsPerVisitor == 0 {
		c.Engagement.MaxWalletsPerVisitor = 10
	}
	if c.Console.SampleEvery == 0 {
		c.Console.SampleEvery = Duration(time.Minute)
	}
	if c.Console.KeepFor == 0 {
		c.Console.KeepFor = Duration(48 * time.Hour)
	}
	if c.Console.SessionTTL == 0 {
		c.Console.SessionTTL = Duration(time.Hour)
	}
	if c.Database.MaxConns == 0 {
		c.Database.MaxConns = 10
	}
	if c.Database.MaxReplicaLag == 0 {
		c.Database.MaxReplicaLag = Duration(30 * time.Second)
	}
	if c.API.Listen == "" {
		c.API.Listen = "127.0.0.1:8080"
	}
	if c.API.RateLimit.PerSecond == 0 {
		c.API.RateLimit.PerSecond = 50
	}
	if c.API.RateLimit.Burst == 0 {
		c.API.RateLimit.Burst = 100
	}
	if c.API.Quota.Credits == 0 {
		c.API.Quota.Credits = 1_000_000
	}
	if c.API.Quota.Period == 0 {
		c.API.Quota.Period = Duration(30 * 24 * time.Hour)
	}
	t := &c.API.Timeouts
	setDur(&t.ReadHeader, 5*time.Second)
	setDur(&t.Read, 15*time.Second)
	setDur(&t.Write, 30*time.Second)
	setDur(&t.Idle, 120*time.Second)
	setDur(&t.Handler, 10*time.Second)
	if c.API.DocsTitle == "" {
		c.API.DocsTitle = "chainlens"
	}
	if c.Aggregator.Schedule == "" {
		c.Aggregator.Schedule = "@every 30s"
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "json"
	}
	for i := range c.Chains {
		ch := &c.Chains[i]
		if ch.BatchSize == 0 {
			ch.BatchSize = 100
			if ch.IsEVM() {
				ch.BatchSize = 1000 // blocks per eth_getLogs range at most
			}
		}
		if ch.Concurrency == 0 {
			ch.Concurrency = 4
		}
		setDur(&ch.PollInterval, time.Second)
		if ch.IsEVM() {
			ch.normalizeEVM()
		}
	}
}

func setDur(d *Duration, def time.Duration) {
	if *d == 0 {
		*d = Duration(def)
	}
}

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration (e.g. 500ms, 5s, 1h)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// splitKey turns "chains[0].rpc[1]" into ["chains","0","rpc","1"].
func splitKey(key string) []string {
	key = strings.NewReplacer("[", ".", "]", "").Replace(key)
	return strings.Split(key, ".")
}

// hasKey reports whether the parsed document sets the key at path,
// following aliases and merge keys (<<: *defaults).
func hasKey(root *yaml.Node, path ...string) bool {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, p := range path {
		var next *yaml.Node
		switch n = deref(n); n.Kind {
		case yaml.MappingNode:
			next = mappingValue(n, p)
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(p); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return false
		}
		n = next
	}
	return true
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// mappingValue is the value of key in a mapping: its own, else one merged
// in with <<.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Tag != "!!merge" {
			continue
		}
		merged := []*yaml.Node{m.Content[i+1]}
		if v := deref(m.Content[i+1]); v.Kind == yaml.SequenceNode {
			merged = v.Content
		}
		for _, src := range merged {
			if src = deref(src); src.Kind == yaml.MappingNode {
				if v := mappingValue(src, key); v != nil {
					return v
				}
			}
		}
	}
	return nil
}

// lineOf finds the line of the node at path in a parsed document, or of the
// deepest ancestor present; 0 when nothing matches.
func lineOf(root *yaml.Node, path ...string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, p := range path {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
			if next == nil {
				return line
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}
