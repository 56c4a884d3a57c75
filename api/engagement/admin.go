package engagement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	eng "github.com/chainlens/chainlens/engagement"
)

// Admin is the admin HTTP API of campaigns (secret keys with the admin
// scope): list, export, import, pause, resume and the report.
type Admin struct {
	db *bun.DB
	// chains are the configured chains (id → kind), which goals and rules
	// must name.
	chains map[string]string
}

// NewAdmin returns the admin API over db for the configured chains (id → kind).
func NewAdmin(db *bun.DB, chains map[string]string) *Admin { return &Admin{db: db, chains: chains} }

// Register adds the admin routes to h.
func (a *Admin) Register(h api.Handlers) {
	h.Admin[route.AdminListCampaigns] = a.list
	h.Admin[route.AdminImportCampaigns] = a.importFile
	h.Admin[route.AdminExportCampaigns] = a.export
	h.Admin[route.AdminGetCampaign] = a.get
	h.Admin[route.AdminPauseCampaign] = a.setStatus("paused")
	h.Admin[route.AdminResumeCampaign] = a.setStatus("active")
	h.Admin[route.AdminCampaignReport] = a.report
}

func campaignID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, problem.BadParam("id", "must be a positive campaign id")
	}
	return id, nil
}

func notFound(err error) error {
	if errors.Is(err, eng.ErrNotFound) {
		return problem.Status(http.StatusNotFound, "%v", err)
	}
	if errors.Is(err, eng.ErrNoReport) {
		return problem.Status(http.StatusNotFound, "%v", err)
	}
	return err
}

func (a *Admin) list(w http.ResponseWriter, r *http.Request) error {
	out, err := eng.List(r.Context(), a.db)
	if err != nil {
		return err
	}
	if out == nil {
		out = []eng.Summary{}
	}
	return api.WriteJSON(w, http.StatusOK, out)
}

func (a *Admin) export(w http.ResponseWriter, r *http.Request) error {
	f, err := eng.Export(r.Context(), a.db)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, f)
}

// get answers one campaign in the import format, with its audiences.
func (a *Admin) get(w http.ResponseWriter, r *http.Request) error {
	id, err := campaignID(r)
	if err != nil {
		return err
	}
	one, err := eng.ExportCampaign(r.Context(), a.db, id)
	if err != nil {
		return notFound(err)
	}
	return api.WriteJSON(w, http.StatusOK, one)
}

// importFile validates and writes a campaigns file (as `chainlens
// campaigns import`); every problem is listed in invalid_params.
func (a *Admin) importFile(w http.ResponseWriter, r *http.Request) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return problem.Status(http.StatusUnsupportedMediaType, "the body must be application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var f eng.File
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return problem.BadParam("body", fmt.Sprintf("not a campaigns file: %v", err))
	}
	if dec.More() {
		return problem.BadParam("body", "not a campaigns file: more after its JSON object")
	}
	if err := errors.Join(f.Validate(), f.CheckChains(a.chains)); err != nil {
		return problem.BadParam("body", err.Error())
	}
	res, err := eng.Import(r.Context(), a.db, &f)
	if err != nil {
		return notFound(err)
	}
	return api.WriteJSON(w, http.StatusOK, map[string]any{"audiences": res.Audiences, "campaigns": res.Campaigns})
}

func (a *Admin) setStatus(status string) api.AdminHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := campaignID(r)
		if err != nil {
			return err
		}
		if err := eng.SetStatus(r.Context(), a.db, id, status); err != nil {
			return notFound(err)
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "status": status})
	}
}

func (a *Admin) report(w http.ResponseWriter, r *http.Request) error {
	id, err := campaignID(r)
	if err != nil {
		return err
	}
	rep, err := eng.ReadReport(r.Context(), a.db, id)
	if err != nil {
		return notFound(err)
	}
	return api.WriteJSON(w, http.StatusOK, rep)
}
