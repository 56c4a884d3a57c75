package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/problem"
)

// cookieName is the console's session cookie.
const cookieName = "chainlens_console"

// csrfHeader carries the session's CSRF token on every request that
// changes something: the cookie alone never suffices.
const csrfHeader = "X-CSRF-Token"

// session is a logged-in console session.
type session struct {
	KeyID     int64     `json:"key_id"`
	KeyName   string    `json:"key_name"`
	CSRF      string    `json:"csrf"`
	ExpiresAt time.Time `json:"expires_at"`
}

type ctxKey struct{}

func sessionOf(ctx context.Context) *session { s, _ := ctx.Value(ctxKey{}).(*session); return s }

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("console: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// sameOrigin refuses a request a browser sent from another site: its
// Origin (sent with every POST) or, without one, its Sec-Fetch-Site must
// be this server's. Requests without either (curl) are not a browser's.
func sameOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return problem.Status(http.StatusForbidden, "the console answers only pages of its own origin (Origin %q)", o)
		}
		return nil
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return problem.Status(http.StatusForbidden, "the console answers only pages of its own origin (Sec-Fetch-Site %q)", s)
	}
	return nil
}

// login checks an admin key and opens a session: POST {"key": "sk_…"}.
func (c *Console) login(w http.ResponseWriter, r *http.Request) error {
	if err := sameOrigin(r); err != nil {
		return err
	}
	if mt := r.Header.Get("Content-Type"); !strings.HasPrefix(mt, "application/json") {
		// A cross-site form cannot send JSON without a preflight.
		return problem.Status(http.StatusUnsupportedMediaType, "log in with a JSON body: {\"key\": \"sk_…\"}")
	}
	var body struct {
		Key string `json:"key"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil || body.Key == "" {
		return problem.BadParam("key", "an admin API key is required")
	}
	k, err := c.opt.Auth.Authenticate(r.Context(), strings.TrimSpace(body.Key))
	if errors.Is(err, apikey.ErrUnknownKey) {
		return problem.Status(http.StatusUnauthorized, "the API key is unknown or revoked")
	}
	if err != nil {
		return err
	}
	if k.Kind != apikey.Secret || !k.Allows(apikey.ScopeAdmin) {
		return problem.Status(http.StatusForbidden, "the console needs a secret key with the admin scope")
	}
	token, err := randomToken()
	if err != nil {
		return err
	}
	csrf, err := randomToken()
	if err != nil {
		return err
	}
	s := &session{KeyID: k.ID, KeyName: k.Name, CSRF: csrf, ExpiresAt: c.now().Add(c.opt.Config.Console.SessionTTL.D()).UTC().Truncate(time.Second)}
	// Expired sessions go with each login: the table stays small.
	if _, err := c.opt.DB.NewRaw(`DELETE FROM console_sessions WHERE expires_at < ?`, c.now()).Exec(r.Context()); err != nil {
		return fmt.Errorf("console sessions: %w", err)
	}
	if _, err := c.opt.DB.NewRaw(`INSERT INTO console_sessions (token_hash, key_id, csrf, expires_at) VALUES (?, ?, ?, ?)`,
		tokenHash(token), s.KeyID, s.CSRF, s.ExpiresAt).Exec(r.Context()); err != nil {
		return fmt.Errorf("console sessions: %w", err)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: c.path, MaxAge: int(c.opt.Config.Console.SessionTTL.D() / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	return api.WriteJSON(w, http.StatusOK, s)
}

// secure says whether the cookie must be sent over TLS only.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// logout ends the session and clears the cookie.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) error {
	if ck, err := r.Cookie(cookieName); err == nil {
		if _, err := c.opt.DB.NewRaw(`DELETE FROM console_sessions WHERE token_hash = ?`, tokenHash(ck.Value)).Exec(r.Context()); err != nil {
			return fmt.Errorf("console sessions: %w", err)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: c.path, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r)})
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// authed serves h to a live session only: the cookie's session exists, has
// not expired, and its key is still a live secret key with the admin scope
// (revoking the key ends its sessions at once). A request that changes
// something must also carry the session's CSRF token and come from the
// console's own origin.
func (c *Console) authed(h func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		ck, err := r.Cookie(cookieName)
		if err != nil || ck.Value == "" {
			return problem.Status(http.StatusUnauthorized, "log in to the console with an admin API key")
		}
		var s session
		err = c.opt.DB.QueryRowContext(r.Context(), `SELECT s.key_id, k.name, s.csrf, s.expires_at FROM console_sessions s
			JOIN api_keys k ON k.id = s.key_id
			WHERE s.token_hash = ? AND s.expires_at > ? AND k.revoked_at IS NULL AND k.kind = 'secret' AND 'admin' = ANY (k.scopes)`,
			tokenHash(ck.Value), c.now()).Scan(&s.KeyID, &s.KeyName, &s.CSRF, &s.ExpiresAt)
		if errors.Is(err, sql.ErrNoRows) {
			return problem.Status(http.StatusUnauthorized, "the console session has ended (expired, logged out or its key revoked): log in again")
		}
		if err != nil {
			return fmt.Errorf("console sessions: %w", err)
		}
		s.ExpiresAt = s.ExpiresAt.UTC()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := sameOrigin(r); err != nil {
				return err
			}
			if subtle.ConstantTimeCompare([]byte(r.Header.Get(csrfHeader)), []byte(s.CSRF)) != 1 {
				return problem.Status(http.StatusForbidden, "the request lacks the session's %s header", csrfHeader)
			}
		}
		return h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, &s)))
	}
}
