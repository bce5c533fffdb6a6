package httpapi

import _ "embed"

// openAPI is the OpenAPI 3.1 document of this API, served as is by
// GET /openapi.json. contract_test.go keeps it and the routes in step.
//
//go:embed openapi.json
var openAPI []byte

func openAPIDoc(call, []byte) (result, error) { return result{body: openAPI}, nil }
