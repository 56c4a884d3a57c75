package golden_test

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/chainlens/chainlens/api/openapi"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/internal/apitest"
)

var updateExamples = flag.Bool("update-examples", false, "rewrite api/openapi/examples.json from the recordings' answers")

const examplesFile = "../../api/openapi/examples.json"

// TestOpenAPIExamples: the examples of the OpenAPI document are real
// answers of the recorded localnets and validate against their
// operations' schemas. With -update-examples it writes them: for each
// analytics operation the first URL of the golden set answered 200.
func TestOpenAPIExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes every recording")
	}
	db, cfg := indexed(t)
	now := clockAfter(t, db)
	srv := apitest.Serve(t, db, cfg, now)
	if *updateExamples {
		ex := map[string]any{}
		for _, op := range route.Table() {
			if !op.Analytics() || op.Method != http.MethodGet {
				continue
			}
			for _, u := range urls(op, cfg.API.Groups[op.Group.Base()].Prefix) {
				resp, body := get(t, srv, u)
				if resp.StatusCode != http.StatusOK {
					continue
				}
				var v any
				if err := json.Unmarshal(body, &v); err != nil {
					t.Fatal(err)
				}
				ex[op.ID().String()] = openapi.Trim(v, 2)
				break
			}
		}
		b, err := json.MarshalIndent(ex, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(examplesFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d examples; run the test again (without the flag) to check them in the document", len(ex))
		return
	}
	resp, body := srv.Get(t, "/openapi.json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/openapi.json: %d", resp.StatusCode)
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("an example does not validate: %v", err)
	}
	withExample, analytics := 0, 0
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Responses == nil {
				continue
			}
			if r := op.Responses.Value("200"); r != nil && r.Value != nil {
				if mt := r.Value.Content.Get("application/json"); mt != nil {
					analytics++
					if len(mt.Examples) > 0 {
						withExample++
					}
				}
			}
		}
	}
	if withExample < 80 {
		t.Fatalf("%d of %d operations have an example; want the analytics operations' (run with -update-examples)", withExample, analytics)
	}
	t.Logf("%d of %d operations with a JSON answer have a real example", withExample, analytics)
}

// TestDocsTryIt opens the interactive reference (/docs) of a server over
// the indexed recordings in headless Chromium, driven by playwright-core
// (api/docsui/test/tryit.mjs): it loads with no request off the server and
// no console error, takes a key, and a try-it call answers 200 with the
// answer. It needs `scripts/docs-ui.sh` (npm ci) and Chromium
// (`scripts/sdk.sh` installs it); it fails, never skips, without them.
func TestDocsTryIt(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes every recording and starts Chromium")
	}
	if _, err := os.Stat("../../api/docsui/node_modules/playwright-core"); err != nil {
		t.Fatal("api/docsui/node_modules is missing: run scripts/docs-ui.sh (make test does)")
	}
	db, cfg := indexed(t)
	now := clockAfter(t, db)
	srv := apitest.Serve(t, db, cfg, now)
	shot := filepath.Join(t.TempDir(), "docs.png")
	if dir := os.Getenv("CHAINLENS_SCREENSHOTS"); dir != "" {
		shot = filepath.Join(dir, "docs.png")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "test/tryit.mjs", srv.URL, srv.Key, shot)
	cmd.Dir = "../../api/docsui"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("try-it in Chromium: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
}
