// Package apitest checks real API answers against the OpenAPI document the
// server itself serves (the route table's schemas), for tests.
package apitest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Validate fails t when body, answered with resp's status and headers to
// method target (a path with its query), does not match document, the
// server's /openapi.json.
func Validate(t testing.TB, document []byte, method, target string, resp *http.Response, body []byte) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	route, pathParams, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not in the document: %v", method, target, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
	}); err != nil {
		t.Errorf("%s %s: the answer does not match the OpenAPI document: %v", method, target, err)
	}
}
