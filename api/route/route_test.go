package route

import (
	"bufio"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// interfaceDoc is the contract the table is checked against (a copy of
// the shared interface.md).
const interfaceDoc = "testdata/interface.md"

// opByID returns the operation of the table with the given ID.
func opByID(t *testing.T, id string) Operation {
	t.Helper()
	for _, op := range Table() {
		if op.ID().String() == id {
			return op
		}
	}
	t.Fatalf("no operation %q", id)
	return Operation{}
}

func TestCounts(t *testing.T) {
	ops := Table()
	if len(ops) != 102 {
		t.Fatalf("len(Table()) = %d, want 102", len(ops))
	}
	tests := []struct {
		group Group
		want  int
	}{
		{Engagement, 5}, {Dex, 31}, {DexLens, 9}, {Perp, 7}, {PerpLens, 24},
		{Stablecoins, 13}, {Dex2, 6}, {Staking, 3}, {SmartAccount, 4},
	}
	for _, tt := range tests {
		got := 0
		for _, op := range ops {
			if op.Group == tt.group {
				got++
			}
		}
		if got != tt.want {
			t.Errorf("group %s: %d operations, want %d", tt.group, got, tt.want)
		}
	}
	// Groups appear in the order of Groups, each in one run.
	last := -1
	for _, op := range ops {
		i := slices.Index(Groups, op.Group)
		if i < 0 {
			t.Fatalf("%s: unknown group %q", op.ID(), op.Group)
		}
		if i < last {
			t.Errorf("%s: group %s out of the order of Groups", op.ID(), op.Group)
		}
		last = i
	}
}

// scribble overwrites every name, enum value and description reachable from s.
func scribble(s *Schema) {
	if s == nil {
		return
	}
	s.Description = "changed"
	for i := range s.Enum {
		s.Enum[i] = "changed"
	}
	for i := range s.Properties {
		s.Properties[i].Name = "changed"
		scribble(s.Properties[i].Schema)
	}
	scribble(s.Items)
	scribble(s.AdditionalProperties)
}

// mentions reports whether "changed" is reachable from s.
func mentions(s *Schema) bool {
	if s == nil {
		return false
	}
	if s.Description == "changed" || slices.Contains(s.Enum, "changed") {
		return true
	}
	for _, p := range s.Properties {
		if p.Name == "changed" || mentions(p.Schema) {
			return true
		}
	}
	return mentions(s.Items) || mentions(s.AdditionalProperties)
}

func TestTableIsFresh(t *testing.T) {
	a := Table()
	for i := range a {
		a[i].Path = "changed"
		for j := range a[i].Params {
			for k := range a[i].Params[j].Enum {
				a[i].Params[j].Enum[k] = "changed"
			}
			if a[i].Params[j].Min != nil {
				*a[i].Params[j].Min = -1
			}
		}
		scribble(a[i].Response)
		scribble(a[i].Body)
	}
	for _, op := range Table() {
		if op.Path == "changed" || mentions(op.Response) || mentions(op.Body) {
			t.Fatalf("%s: Table() shares values between calls", op.ID())
		}
		for _, p := range op.Params {
			if slices.Contains(p.Enum, "changed") || (p.Min != nil && *p.Min == -1) {
				t.Fatalf("%s %s: Table() shares parameter values between calls", op.ID(), p.Name)
			}
		}
	}
}

// docLines reads the interface document.
func docLines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(interfaceDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// cells splits a markdown table row into trimmed cells.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	parts := strings.Split(line[1:len(line)-1], "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func TestTableMatchesInterface(t *testing.T) {
	type row struct {
		group                 Group
		method, path, summary string
	}
	// interfaceGroups maps the endpoint group headings of the interface to groups.
	interfaceGroups := map[string]Group{
		"### Engagement group":                       Engagement,
		"### Dex analytics group":                    Dex,
		"### Dex lens reports group":                 DexLens,
		"### Perpetuals exchange analytics group":    Perp,
		"### Perpetuals exchange lens reports group": PerpLens,
		"### Stablecoin analytics group":             Stablecoins,
		"### Second dex chain analytics group":       Dex2,
		"### Multi-chain staking analytics group":    Staking,
		"### Smart account analytics group":          SmartAccount,
	}
	var want []row
	var group Group
	for _, line := range docLines(t) {
		if strings.HasPrefix(line, "### ") {
			group = ""
			for prefix, g := range interfaceGroups {
				if strings.HasPrefix(line, prefix) {
					group = g
				}
			}
			continue
		}
		c := cells(line)
		if len(c) != 3 || (c[0] != "GET" && c[0] != "POST") {
			continue
		}
		if group == "" {
			t.Fatalf("endpoint row outside a group section: %q", line)
		}
		want = append(want, row{group, c[0], c[1], strings.TrimSuffix(c[2], " (detailed below)")})
	}
	if len(want) != 102 {
		t.Fatalf("interface lists %d endpoints, want 102", len(want))
	}
	var got []row
	for _, op := range Table() {
		got = append(got, row{op.Group, op.Method, op.Path, op.Summary})
	}
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("missing %+v", want[i])
		case i >= len(want):
			t.Errorf("extra %+v", got[i])
		case got[i] != want[i]:
			t.Errorf("operation %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// resourceHeading matches the resource headings of the interface.
var resourceHeading = regexp.MustCompile(`^### .+ \((request body|response|items of the response) of (GET|POST) (\S+)\)$`)

// TestResourceFields checks every resource table of the interface against
// the schema it describes: top-level field names in order, nested fields
// present, and optional/required flags where the table has them.
func TestResourceFields(t *testing.T) {
	lines := docLines(t)
	checked := 0
	for i := 0; i < len(lines); i++ {
		m := resourceHeading.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		op := opByID(t, m[2]+" "+m[3])
		var root *Schema
		switch m[1] {
		case "request body":
			root = op.Body
		case "response":
			root = op.Response
		case "items of the response":
			if op.Response != nil {
				root = op.Response.Items
			}
		}
		if root == nil {
			t.Errorf("%s: no schema for %q", op.ID(), m[1])
			continue
		}
		var header []string
		var top []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "#"); i++ {
			c := cells(lines[i])
			if c == nil && header != nil {
				break // only the first table after the heading
			}
			if c == nil || strings.HasPrefix(c[0], "---") {
				continue
			}
			if header == nil {
				header = c
				continue
			}
			field := c[0]
			s, prop := root, Property{}
			for _, name := range strings.Split(field, ".") {
				found := false
				for _, p := range s.Properties {
					if p.Name == name {
						s, prop, found = p.Schema, p, true
						break
					}
				}
				if !found {
					t.Errorf("%s: field %q missing", op.ID(), field)
					break
				}
			}
			if !strings.Contains(field, ".") {
				top = append(top, field)
			}
			for j, h := range header {
				switch h {
				case "Optional":
					if want := c[j] == "yes"; prop.Name != "" && prop.Optional != want {
						t.Errorf("%s: field %q Optional = %v, want %v", op.ID(), field, prop.Optional, want)
					}
				case "Required":
					if want := !strings.HasPrefix(c[j], "yes"); prop.Name != "" && prop.Optional != want {
						t.Errorf("%s: field %q Optional = %v, want %v", op.ID(), field, prop.Optional, want)
					}
				}
			}
		}
		i--
		var names []string
		for _, p := range root.Properties {
			names = append(names, p.Name)
		}
		if !slices.Equal(names, top) {
			t.Errorf("%s: fields %v, want %v", op.ID(), names, top)
		}
		checked++
	}
	if checked != 11 {
		t.Errorf("checked %d resource tables, want 11", checked)
	}
}

// endpointHeading matches the headings of the detailed endpoints.
var endpointHeading = regexp.MustCompile(`^#### (GET|POST) (\S+)$`)

// TestInterfaceParameterTables checks the parameter tables of the interface:
// every parameter they name, in their order and location, and no other.
func TestInterfaceParameterTables(t *testing.T) {
	type named struct {
		name string
		in   In
	}
	want := map[string][]named{}
	lines := docLines(t)
	for i := 0; i < len(lines); i++ {
		if m := endpointHeading.FindStringSubmatch(lines[i]); m != nil {
			id := m[1] + " " + m[2]
			var header []string
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "#"); i++ {
				c := cells(lines[i])
				if c == nil || strings.HasPrefix(c[0], "---") {
					continue
				}
				if header == nil {
					header = c
					if c[0] != "Parameter" {
						break
					}
					continue
				}
				in := InQuery
				if j := slices.Index(header, "In"); j >= 0 {
					in = In(c[j])
				}
				for _, n := range strings.Split(c[0], ", ") {
					want[id] = append(want[id], named{n, in})
				}
			}
			i--
			continue
		}
		// The lens table "| Path | Query parameters | Response 200 |".
		if c := cells(lines[i]); len(c) == 3 && strings.HasPrefix(c[0], "/") {
			for _, n := range strings.Split(c[1], ", ") {
				want["GET "+c[0]] = append(want["GET "+c[0]], named{n, InQuery})
			}
		}
	}
	if len(want) != 8 {
		t.Errorf("found parameter tables for %d endpoints, want 8", len(want))
	}
	for id, w := range want {
		var got []named
		for _, p := range opByID(t, id).Params {
			got = append(got, named{p.Name, p.In})
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: params %v, want %v", id, got, w)
		}
	}
}

func TestPatternsUniqueAndAccepted(t *testing.T) {
	muxes := map[string]*http.ServeMux{}
	seen := map[string]bool{}
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, op := range Table() {
		base := op.Group.Base()
		if !slices.Contains(Bases, base) {
			t.Errorf("%s: base %q not in Bases", op.ID(), base)
		}
		key := base + " " + op.Pattern()
		if seen[key] {
			t.Errorf("%s: duplicate pattern in base %s", op.ID(), base)
		}
		seen[key] = true
		if muxes[base] == nil {
			muxes[base] = http.NewServeMux()
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: ServeMux rejects the pattern: %v", op.ID(), r)
				}
			}()
			muxes[base].Handle(op.Pattern(), h)
		}()
	}
}

func TestPathParams(t *testing.T) {
	for _, op := range Table() {
		inPath := map[string]int{}
		for _, p := range op.Params {
			if p.In == InPath {
				inPath[p.Name]++
				if !p.Required || (p.Type != String && p.Type != Denom && p.Type != Bech32) || p.Multi || p.Default != "" {
					t.Errorf("%s: path param %q must be a required single string (or denom) without default", op.ID(), p.Name)
				}
			}
		}
		names := op.PathParams()
		for _, n := range names {
			if inPath[n] != 1 {
				t.Errorf("%s: {%s} has %d path params, want 1", op.ID(), n, inPath[n])
			}
		}
		for n := range inPath {
			if !slices.Contains(names, n) {
				t.Errorf("%s: path param %q has no path segment", op.ID(), n)
			}
		}
	}
}

// parses reports whether v is a valid wire value of type typ.
func parses(typ ParamType, v string) bool {
	switch typ {
	case String:
		return v != ""
	case Integer:
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case Number:
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	case Boolean:
		return v == "true" || v == "false"
	case Date:
		for _, layout := range []string{time.DateTime, time.DateOnly, time.RFC3339} {
			if _, err := time.Parse(layout, v); err == nil {
				return true
			}
		}
	}
	return false
}

func TestParams(t *testing.T) {
	for _, op := range Table() {
		seen := map[string]bool{}
		for _, p := range op.Params {
			where := op.ID().String() + " " + p.Name
			if p.Name == "" || seen[p.Name] {
				t.Errorf("%s: empty or duplicate name", where)
			}
			seen[p.Name] = true
			if p.In != InPath && p.In != InQuery {
				t.Errorf("%s: In = %q", where, p.In)
			}
			if !slices.Contains([]ParamType{String, Integer, Number, Boolean, Date, Denom, Bech32}, p.Type) {
				t.Errorf("%s: Type = %q", where, p.Type)
			}
			if p.Description == "" {
				t.Errorf("%s: no description", where)
			}
			if p.Required && p.Default != "" {
				t.Errorf("%s: required with a default", where)
			}
			if p.Multi && p.In != InQuery {
				t.Errorf("%s: Multi outside the query", where)
			}
			if p.MaxItems != 0 && (!p.Multi || p.MaxItems < 1) {
				t.Errorf("%s: MaxItems = %d without Multi", where, p.MaxItems)
			}
			for i, v := range p.Enum {
				if !parses(p.Type, v) || slices.Index(p.Enum, v) != i {
					t.Errorf("%s: enum value %q invalid or repeated", where, v)
				}
			}
			if (p.Min != nil || p.Max != nil) && p.Type != Integer && p.Type != Number {
				t.Errorf("%s: bounds on a %s", where, p.Type)
			}
			if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
				t.Errorf("%s: Min %v > Max %v", where, *p.Min, *p.Max)
			}
			if p.Default == "" {
				continue
			}
			if !parses(p.Type, p.Default) {
				t.Errorf("%s: default %q is not a %s", where, p.Default, p.Type)
			}
			if p.Enum != nil && !slices.Contains(p.Enum, p.Default) {
				t.Errorf("%s: default %q not in %v", where, p.Default, p.Enum)
			}
			if f, err := strconv.ParseFloat(p.Default, 64); err == nil &&
				((p.Min != nil && f < *p.Min) || (p.Max != nil && f > *p.Max)) {
				t.Errorf("%s: default %q out of bounds", where, p.Default)
			}
		}
	}
}

func TestCreditsStatusAuth(t *testing.T) {
	charts := []ID{DexPairChart, DexTokenChart}
	publishable := []ID{EngagementSDKTrack, EngagementCampaign, EngagementCampaignMulti}
	for _, op := range Table() {
		id := op.ID()
		wantCredits := 5
		if slices.Contains(charts, id) {
			wantCredits = 25
		}
		wantStatus, wantNoAuth := 200, false
		if id == EngagementClick {
			wantStatus, wantNoAuth = 302, true
		}
		if op.Credits != wantCredits {
			t.Errorf("%s: Credits = %d, want %d", id, op.Credits, wantCredits)
		}
		if op.Status != wantStatus {
			t.Errorf("%s: Status = %d, want %d", id, op.Status, wantStatus)
		}
		if op.NoAuth != wantNoAuth {
			t.Errorf("%s: NoAuth = %v, want %v", id, op.NoAuth, wantNoAuth)
		}
		if want := slices.Contains(publishable, id); op.Publishable != want {
			t.Errorf("%s: Publishable = %v, want %v", id, op.Publishable, want)
		}
		if want := op.Method == "POST"; (op.Body != nil) != want {
			t.Errorf("%s: has body = %v, want %v", id, op.Body != nil, want)
		}
		if op.Method != "GET" && op.Method != "POST" {
			t.Errorf("%s: method %q", id, op.Method)
		}
		if op.Summary == "" {
			t.Errorf("%s: no summary", id)
		}
		if op.Analytics() == (op.Group == Engagement) {
			t.Errorf("%s: Analytics() = %v", id, op.Analytics())
		}
	}
}

// checkSchema walks s and reports malformed parts.
func checkSchema(t *testing.T, where string, s *Schema) {
	t.Helper()
	if s == nil {
		t.Errorf("%s: nil schema", where)
		return
	}
	if !slices.Contains([]string{"", "object", "array", "string", "number", "integer", "boolean"}, s.Type) {
		t.Errorf("%s: type %q", where, s.Type)
	}
	if s.Type == "array" {
		if s.Items == nil {
			t.Errorf("%s: array without items", where)
		}
	}
	if s.Items != nil {
		checkSchema(t, where+"[]", s.Items)
	}
	if len(s.Enum) > 0 && s.Type != "string" {
		t.Errorf("%s: enum on %q", where, s.Type)
	}
	if len(s.Properties) > 0 && s.Type != "object" && s.Type != "" {
		t.Errorf("%s: properties on %q", where, s.Type)
	}
	names := map[string]bool{}
	for _, p := range s.Properties {
		if p.Name == "" || names[p.Name] {
			t.Errorf("%s: empty or duplicate member %q", where, p.Name)
		}
		names[p.Name] = true
		checkSchema(t, where+"."+p.Name, p.Schema)
	}
	if s.AdditionalProperties != nil {
		checkSchema(t, where+".*", s.AdditionalProperties)
	}
}

func TestSchemas(t *testing.T) {
	for _, op := range Table() {
		if op.ID() == EngagementClick {
			if op.Response != nil {
				t.Errorf("GET /click: Response must be nil")
			}
			continue
		}
		if op.Response == nil {
			t.Errorf("%s: nil Response", op.ID())
			continue
		}
		checkSchema(t, op.ID().String(), op.Response)
		if op.Body != nil {
			checkSchema(t, op.ID().String()+" body", op.Body)
		}
	}
}
