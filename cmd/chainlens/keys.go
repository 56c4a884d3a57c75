package main

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/config"
)

func newKeysCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Create, list and revoke API keys; show their usage"}

	var (
		name, scopes, origins string
		publishable           bool
		credits               int64
		period                time.Duration
		perSecond             float64
		burst                 int
	)
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a key and print it once (only its hash is stored)",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			cfg, db := e.cfg, e.db
			spec, err := keySpec(cfg, name, scopes, origins, publishable, credits, period, perSecond, burst)
			if err != nil {
				return err
			}
			raw, k, err := apikey.Create(cmd.Context(), db, spec)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), raw)
			fmt.Fprintf(cmd.ErrOrStderr(), "created key %d %q (%s, scopes %s); it is shown only this once\n", k.ID, k.Name, k.Kind, strings.Join(k.Scopes, ","))
			return nil
		}),
	}
	create.Flags().StringVar(&name, "name", "", "name of the key (required)")
	create.Flags().StringVar(&scopes, "scopes", "", "comma-separated groups: all, admin, "+strings.Join(config.Groups, ", "))
	create.Flags().BoolVar(&publishable, "publishable", false, "a publishable pk_ key for browsers (only /sdk/track and /campaign)")
	create.Flags().StringVar(&origins, "origins", "", "comma-separated origins a publishable key may be used from")
	create.Flags().Int64Var(&credits, "credits", 0, "credit quota per period (default: api.quota.credits)")
	create.Flags().DurationVar(&period, "period", 0, "quota period (default: api.quota.period)")
	create.Flags().Float64Var(&perSecond, "rate", 0, "requests per second (default: api.rate_limit.per_second)")
	create.Flags().IntVar(&burst, "burst", 0, "burst size (default: api.rate_limit.burst)")
	_ = create.MarkFlagRequired("name")
	_ = create.MarkFlagRequired("scopes")

	list := &cobra.Command{
		Use:   "list",
		Short: "List keys (never the keys themselves)",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			db := e.db
			keys, err := apikey.List(cmd.Context(), db)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tKIND\tHINT\tSCOPES\tQUOTA\tCREATED\tREVOKED")
			for _, k := range keys {
				revoked := "-"
				if !k.RevokedAt.IsZero() {
					revoked = k.RevokedAt.UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s…\t%s\t%d/%s\t%s\t%s\n", k.ID, k.Name, k.Kind, k.Hint, strings.Join(k.Scopes, ","),
					k.QuotaCredits, k.QuotaPeriod(), k.CreatedAt.UTC().Format(time.RFC3339), revoked)
			}
			return w.Flush()
		}),
	}
	revoke := &cobra.Command{
		Use:   "revoke ID|NAME",
		Short: "Revoke a key by id or name (effective within 1 s in every process)",
		Args:  cobra.ExactArgs(1),
		RunE: g.withDB(func(cmd *cobra.Command, args []string, e env) error {
			db := e.db
			n, err := apikey.Revoke(cmd.Context(), db, args[0])
			if err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("no live key with id or name %q", args[0])
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %d key(s)\n", n)
			return nil
		}),
	}
	usage := &cobra.Command{
		Use:   "usage",
		Short: "Show credits and calls per key and period",
		Args:  cobra.NoArgs,
		RunE: g.withDB(func(cmd *cobra.Command, _ []string, e env) error {
			db := e.db
			rows, err := apikey.UsageReport(cmd.Context(), db)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "KEY\tNAME\tPERIOD START\tCALLS\tCREDITS\tQUOTA")
			for _, u := range rows {
				fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%d\t%d\n", u.KeyID, u.Name, u.PeriodStart.UTC().Format(time.RFC3339), u.Calls, u.Credits, u.Quota)
			}
			return w.Flush()
		}),
	}
	cmd.AddCommand(create, list, revoke, usage)
	return cmd
}

// parseOrigin reads an allowed origin as a browser sends it in Origin:
// scheme://host[:port], lower case, without a path (or "*").
func parseOrigin(o string) (string, error) {
	if o == "*" {
		return o, nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin like https://site.example (scheme and host, no path)", o)
	}
	host := strings.ToLower(u.Host)
	// Browsers leave the default port out of Origin.
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		host = strings.ToLower(u.Hostname())
	}
	return u.Scheme + "://" + host, nil
}

// keySpec validates the flags of `keys create` against the config defaults.
func keySpec(cfg *config.Config, name, scopes, origins string, publishable bool, credits int64, period time.Duration, perSecond float64, burst int) (apikey.Spec, error) {
	s := apikey.Spec{Name: name, Kind: apikey.Secret, QuotaCredits: cfg.API.Quota.Credits, QuotaPeriod: cfg.API.Quota.Period.D(),
		RatePerSec: cfg.API.RateLimit.PerSecond, RateBurst: cfg.API.RateLimit.Burst}
	if _, err := strconv.ParseInt(strings.TrimSpace(name), 10, 64); err == nil {
		return s, fmt.Errorf("--name %q: a name must not be a number (`keys revoke` takes an id or a name)", name)
	}
	allowed := append([]string{apikey.ScopeAll, apikey.ScopeAdmin}, config.Groups...)
	for _, sc := range strings.Split(scopes, ",") {
		sc = strings.TrimSpace(sc)
		if sc == "" {
			continue
		}
		if !contains(allowed, sc) {
			return s, fmt.Errorf("--scopes: unknown scope %q (one of %s)", sc, strings.Join(allowed, ", "))
		}
		s.Scopes = append(s.Scopes, sc)
	}
	if len(s.Scopes) == 0 {
		return s, fmt.Errorf("--scopes: at least one scope is required")
	}
	for _, o := range strings.Split(origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origin, err := parseOrigin(o)
			if err != nil {
				return s, fmt.Errorf("--origins: %w", err)
			}
			s.Origins = append(s.Origins, origin)
		}
	}
	if publishable {
		s.Kind = apikey.Publishable
		if len(s.Origins) == 0 {
			return s, fmt.Errorf("--origins: a publishable key needs its allowed origins")
		}
	} else if len(s.Origins) > 0 {
		return s, fmt.Errorf("--origins: only publishable keys carry origins")
	}
	if math.IsNaN(perSecond) || math.IsInf(perSecond, 0) {
		return s, fmt.Errorf("--rate must be a number of requests per second")
	}
	if credits < 0 || period < 0 || perSecond < 0 || burst < 0 {
		return s, fmt.Errorf("--credits, --period, --rate and --burst must be positive")
	}
	if credits > 0 {
		s.QuotaCredits = credits
	}
	if period > 0 {
		if period < time.Second {
			return s, fmt.Errorf("--period: must be at least 1s")
		}
		s.QuotaPeriod = period
	}
	if perSecond > 0 {
		s.RatePerSec = perSecond
	}
	if burst > 0 {
		s.RateBurst = burst
	}
	return s, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
