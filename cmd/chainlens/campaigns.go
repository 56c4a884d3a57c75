package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/engagement"
)

const campaignsHelp = `Manage the campaigns served by GET /campaign.

The file of "import" (and the output of "export") is one JSON object:

  {
    "audiences": [
      {"name": "osmo-lps", "kind": "addresses", "addresses": ["osmo1...", "cosmos1...", "0xabc..."]},
      {"name": "everyone", "kind": "global"},
      {"name": "osmo holders", "kind": "rule",    // members filled by the engagement_audiences job
       "rule": {"chain": "osmosis-1",             // a configured chain; every condition given must hold:
                "active_within_days": 30,         //   signed a successful tx in the last 30 days
                "holds": {"denom": "uosmo", "min_amount": "1000000"},  // balance, base units
                "min_dex_volume_usd": "1000"}}    //   dex swap volume (dex chain only)
    ],
    "campaigns": [
      {
        "id": 3,                          // optional: replace campaign 3 instead of creating one
        "owner": "Quasar",
        "name": "01 - CL Campaign",
        "topic": "Concentrated Liquidity",
        "start_date": "2026-01-01T00:00:00Z", // RFC 3339
        "end_date":   "2026-02-01T00:00:00Z", // after start_date; the campaign runs in [start, end)
        "status": "active",               // active (default) or paused
        "priority": 10,                   // higher wins among equally specific audiences
        "impression_budget": 100000,      // optional: most views; omitted = unlimited
        "click_budget": 5000,             // optional: most clicks; omitted = unlimited
        "frequency_cap": 3,               // optional: views per address per UTC day
        "attribution_window": "168h",     // optional Go duration; default 168h
        "utm": {"campaign": "spring", "source": "keplr", "medium": "banner"},  // optional: added to the
                                          // links by /click; website events carrying them convert
        "audiences": ["osmo-lps", "everyone"],
        "creatives": [
          {"position_id": "keplr_home", "logo": "https://.../logo.png", "title": "...", "body": "...",
           "cta": "Dive deeper", "url": "https://app.example/?utm_source=wallet",
           "banner_url": "https://.../banner.png"}   // banner_url may be null (text-only ad)
        ],
        "goals": [                        // optional: the conversions counted in the report
          {"kind": "event", "event": "open_position"},          // a /track or /sdk/track event name
          {"kind": "onchain", "chain": "osmosis-1",             // an action on an indexed chain by a wallet
           "msg_type": "/osmosis.concentratedliquidity.v1beta1.MsgCreatePosition",  // that saw or clicked
           "denom": "uosmo", "min_amount": "1000000"},          // the campaign within the window
          {"kind": "onchain", "chain": "osmosis-1", "contract": "osmo1...wasm"},   // a wasm contract executed
          {"kind": "onchain", "chain": "osmosis-1", "event_type": "token_swapped"},
          {"kind": "onchain", "chain": "eth-mainnet", "contract": "0xa0b8...", "min_amount": "1000000"}  // ERC-20 sent
        ]
      }
    ]
  }

(The // comments above are explanations only; the file is plain JSON.)
Audiences are upserted by name; an addresses audience's member list is replaced.
Addresses match across bech32 prefixes (the same key on every cosmos chain) and
0x addresses case-insensitively. A rule audience's members are filled by a job.
Goals and rules must name configured chains. Conversions are attributed by the
aggregator jobs; "campaigns report ID" prints a campaign's report.
Import validates everything first (dates, http(s) urls, non-empty position ids,
audience names) and writes nothing when any check fails. New position ids
become configured placements.`

func newCampaignsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "campaigns", Short: "Create, update, import, export, list, pause and resume engagement campaigns", Long: campaignsHelp}

	importCmd := &cobra.Command{
		Use:   "import FILE.json",
		Short: "Validate a campaigns file and write it in one transaction",
		Long:  campaignsHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := g.importCampaigns(cmd, args[0], nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "imported %d audiences and %d campaigns (ids %v)\n", res.Audiences, len(res.Campaigns), res.Campaigns)
			return nil
		},
	}
	create := &cobra.Command{
		Use:   "create FILE.json",
		Short: "Create one campaign: a campaigns file with one campaign (no id) and the audiences it names",
		Long:  campaignsHelp,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := g.importCampaigns(cmd, args[0], func(_ bun.IDB, f *engagement.File) error {
				if len(f.Campaigns) != 1 {
					return fmt.Errorf("%s: create takes a file with one campaign, not %d", args[0], len(f.Campaigns))
				}
				if f.Campaigns[0].ID != 0 {
					return fmt.Errorf("%s: the campaign has id %d: use \"campaigns update %d\" to change it", args[0], f.Campaigns[0].ID, f.Campaigns[0].ID)
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created campaign %d\n", res.Campaigns[0])
			return nil
		},
	}
	update := &cobra.Command{
		Use:   "update ID FILE.json",
		Short: "Replace campaign ID with the one campaign of a file (as \"export --id ID\" prints it)",
		Long:  campaignsHelp,
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := campaignIDArg(args[0])
			if err != nil {
				return err
			}
			_, err = g.importCampaigns(cmd, args[1], func(db bun.IDB, f *engagement.File) error {
				if len(f.Campaigns) != 1 {
					return fmt.Errorf("%s: update takes a file with one campaign, not %d", args[1], len(f.Campaigns))
				}
				if c := f.Campaigns[0].ID; c != 0 && c != id {
					return fmt.Errorf("%s: the file's campaign is %d, not %d", args[1], c, id)
				}
				var n int
				if err := db.NewRaw("SELECT count(*) FROM campaigns WHERE id = ?", id).Scan(cmd.Context(), &n); err != nil {
					return err
				}
				if n == 0 {
					return fmt.Errorf("campaign %d does not exist", id)
				}
				f.Campaigns[0].ID = id
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "updated campaign %d\n", id)
			return nil
		},
	}

	var exportID int64
	export := &cobra.Command{
		Use:   "export",
		Short: "Print every audience and campaign (or one campaign with --id) as an import file",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			db := e.db
			f, err := engagement.Export(cmd.Context(), db)
			if exportID != 0 {
				f, err = engagement.ExportCampaign(cmd.Context(), db, exportID)
				if errors.Is(err, engagement.ErrNotFound) {
					return fmt.Errorf("campaign %d does not exist", exportID)
				}
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(f)
		}),
	}

	list := &cobra.Command{
		Use:   "list",
		Short: "List campaigns with their status and counters",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			db := e.db
			cs, err := engagement.List(cmd.Context(), db)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tOWNER\tNAME\tSTATUS\tPRIORITY\tSTART\tEND\tVIEWS\tCLICKS")
			for _, c := range cs {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%d\n", c.ID, c.Owner, c.Name, c.Status, c.Priority,
					c.StartDate.Format(time.RFC3339), c.EndDate.Format(time.RFC3339), c.Impressions, c.Clicks)
			}
			return w.Flush()
		}),
	}

	status := func(use, short, to string) *cobra.Command {
		return &cobra.Command{
			Use:   use + " ID",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := campaignIDArg(args[0])
				if err != nil {
					return err
				}
				_, _, db, err := g.setup(cmd.Context())
				if err != nil {
					return err
				}
				defer db.Close()
				if err := engagement.SetStatus(cmd.Context(), db, id, to); err != nil {
					if errors.Is(err, engagement.ErrNotFound) {
						return fmt.Errorf("campaign %d does not exist", id)
					}
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "campaign %d is %s\n", id, to)
				return nil
			},
		}
	}
	report := &cobra.Command{
		Use:   "report ID",
		Short: "Print a campaign's report (impressions, clicks, CTR, conversions, value, wallets, retention) as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: g.withDB(func(cmd *cobra.Command, args []string, e env) error {
			id, err := campaignIDArg(args[0])
			if err != nil {
				return err
			}
			r, err := engagement.ReadReport(cmd.Context(), e.db, id)
			if errors.Is(err, engagement.ErrNotFound) {
				return fmt.Errorf("campaign %d does not exist", id)
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}),
	}
	export.Flags().Int64Var(&exportID, "id", 0, "print only this campaign and the audiences it names")
	cmd.AddCommand(create, update, importCmd, export, list, report,
		status("pause", "Stop serving a campaign", "paused"),
		status("resume", "Serve a paused campaign again", "active"))
	return cmd
}

// importCampaigns reads, validates (check, when set, first) and imports
// the campaigns file at path, in one transaction.
func (g *globals) importCampaigns(cmd *cobra.Command, path string, check func(bun.IDB, *engagement.File) error) (*engagement.ImportResult, error) {
	f, err := readCampaignFile(path)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%s is invalid:\n%w", path, err)
	}
	cfg, _, db, err := g.setup(cmd.Context())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if check != nil {
		if err := check(db, f); err != nil {
			return nil, err
		}
	}
	known := map[string]string{}
	for _, ch := range cfg.Chains {
		known[ch.ID] = ch.Kind
	}
	if err := f.CheckChains(known); err != nil {
		return nil, fmt.Errorf("%s is invalid:\n%w", path, err)
	}
	res, err := engagement.Import(cmd.Context(), db, f)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	return res, nil
}

// campaignIDArg parses a campaign id argument.
func campaignIDArg(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("campaign id must be a positive integer, not %q", s)
	}
	return id, nil
}

// readCampaignFile parses a campaigns file strictly: unknown fields are errors.
func readCampaignFile(path string) (*engagement.File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f engagement.File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a campaigns file: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: not a campaigns file: more after its JSON object (two files joined?)", path)
	}
	return &f, nil
}
