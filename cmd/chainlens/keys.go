package main

import (
	"errors"
	"fmt"
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

// keySpec validates the flags of `keys create` by the rules every way of
// creating a key shares (apikey.NewSpec); a refusal names its flag.
func keySpec(cfg *config.Config, name, scopes, origins string, publishable bool, credits int64, period time.Duration, perSecond float64, burst int) (apikey.Spec, error) {
	s, err := apikey.NewSpec(cfg.API, apikey.Request{Name: name, Scopes: strings.Split(scopes, ","), Origins: strings.Split(origins, ","),
		Publishable: publishable, Credits: credits, Period: period, PerSecond: perSecond, Burst: burst})
	var re *apikey.RequestError
	if errors.As(err, &re) {
		return s, fmt.Errorf("--%s: %s", re.Field, re.Msg)
	}
	return s, err
}
