// Command chainlens indexes chains, aggregates reports and serves the
// analytics and engagement API. Every role runs in one process (`run`) or
// as its own process against the same database.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "chainlens:", err)
		}
		os.Exit(1)
	}
}

// errSilent marks an error that was already reported to the user.
var errSilent = errors.New("already reported")
