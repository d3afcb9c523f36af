package schema

import (
	"fmt"
	"net/http"
)

// Error is a failure the REST API reports: an HTTP status and Confluent's
// error body {"error_code": Code, "message": Message}. Every operation of
// the registry returns *Error (or nil), so the handlers never invent codes.
type Error struct {
	Status  int
	Code    int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

// Confluent's error codes (rest/exceptions/Errors.java, Confluent 8.3).
const (
	CodeSubjectNotFound               = 40401
	CodeVersionNotFound               = 40402
	CodeSchemaNotFound                = 40403
	CodeSubjectSoftDeleted            = 40404
	CodeSubjectNotSoftDeleted         = 40405
	CodeVersionSoftDeleted            = 40406
	CodeVersionNotSoftDeleted         = 40407
	CodeSubjectCompatibilityNotConfig = 40408
	CodeSubjectModeNotConfigured      = 40409
	CodeIncompatibleSchema            = 40901
	CodeInvalidSchema                 = 42201
	CodeInvalidVersion                = 42202
	CodeInvalidCompatibilityLevel     = 42203
	CodeInvalidMode                   = 42204
	CodeOperationNotPermitted         = 42205
	CodeReferenceExists               = 42206
	CodeInvalidSubject                = 42208
	CodeSchemaTooLarge                = 42209
	CodeInvalidRuleSet                = 42210
	CodeContextNotEmpty               = 42211
	CodeStoreError                    = 50001
	CodeOperationTimeout              = 50002
	// CodeDenied is the Confluent security plugin's authorization failure.
	CodeDenied = 40301
)

func newError(status, code int, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Status: status, Code: code, Message: msg}
}

func errSubjectNotFound(subject string) *Error {
	return newError(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", subject)
}

func errVersionNotFound(version int32) *Error {
	return newError(http.StatusNotFound, CodeVersionNotFound, "Version %d not found.", version)
}

func errSchemaNotFound() *Error {
	return newError(http.StatusNotFound, CodeSchemaNotFound, "Schema not found")
}

func errSchemaIDNotFound(id int32) *Error {
	return newError(http.StatusNotFound, CodeSchemaNotFound, "Schema %d not found", id)
}

// The soft-delete messages lack a space before "Set", as Confluent's do.
func errSubjectSoftDeleted(subject string) *Error {
	return newError(http.StatusNotFound, CodeSubjectSoftDeleted, "Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)
}

func errSubjectNotSoftDeleted(subject string) *Error {
	return newError(http.StatusNotFound, CodeSubjectNotSoftDeleted, "Subject '%s' was not deleted first before being permanently deleted", subject)
}

func errVersionSoftDeleted(subject string, version int32) *Error {
	return newError(http.StatusNotFound, CodeVersionSoftDeleted, "Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, version)
}

func errVersionNotSoftDeleted(subject string, version int32) *Error {
	return newError(http.StatusNotFound, CodeVersionNotSoftDeleted, "Subject '%s' Version %d was not deleted first before being permanently deleted", subject, version)
}

func errSubjectConfigNotConfigured(subject string) *Error {
	return newError(http.StatusNotFound, CodeSubjectCompatibilityNotConfig, "Subject '%s' does not have subject-level compatibility configured", subject)
}

func errSubjectModeNotConfigured(subject string) *Error {
	return newError(http.StatusNotFound, CodeSubjectModeNotConfigured, "Subject '%s' does not have subject-level mode configured", subject)
}

func errIncompatible(subject string, messages []string) *Error {
	return newError(http.StatusConflict, CodeIncompatibleSchema,
		"Schema being registered is incompatible with an earlier schema for subject \"%s\", details: %s", subject, javaList(messages))
}

func errInvalidSchema(msg string) *Error {
	return newError(http.StatusUnprocessableEntity, CodeInvalidSchema, "%s", msg)
}

func errInvalidVersion(version string) *Error {
	return newError(http.StatusUnprocessableEntity, CodeInvalidVersion,
		"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", version)
}

func errInvalidCompatibility() *Error {
	return newError(http.StatusUnprocessableEntity, CodeInvalidCompatibilityLevel,
		"Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive")
}

func errInvalidMode(msg string) *Error {
	if msg == "" {
		msg = "Invalid mode. Valid values are READWRITE, READONLY, IMPORT and FORWARD."
	}
	return newError(http.StatusUnprocessableEntity, CodeInvalidMode, "%s", msg)
}

func errNotPermitted(format string, args ...any) *Error {
	return newError(http.StatusUnprocessableEntity, CodeOperationNotPermitted, format, args...)
}

// errReferenceExists names the referenced version the way Confluent prints
// a SchemaKey.
func errReferenceExists(subject string, version int32) *Error {
	return newError(http.StatusUnprocessableEntity, CodeReferenceExists,
		"One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=%s,version=%d}.", subject, version)
}

func errInvalidSubject(subject string) *Error {
	return newError(http.StatusUnprocessableEntity, CodeInvalidSubject, "The specified subject '%s' is not a valid.", subject)
}

func errSchemaTooLarge() *Error {
	return newError(http.StatusUnprocessableEntity, CodeSchemaTooLarge, "Register operation failed because schema is too large")
}

func errInvalidRuleSet(msg string) *Error {
	return newError(http.StatusUnprocessableEntity, CodeInvalidRuleSet, "%s", msg)
}

func errContextNotEmpty(context string) *Error {
	return newError(http.StatusUnprocessableEntity, CodeContextNotEmpty, "The specified context '%s' is not empty.", context)
}

func errStore(msg string, err error) *Error {
	return newError(http.StatusInternalServerError, CodeStoreError, "%s: %v", msg, err)
}

func errTimeout(msg string) *Error {
	return newError(http.StatusInternalServerError, CodeOperationTimeout, "%s", msg)
}

// errHTTP is rest-utils' body for the container's own failures (unknown
// path, method, media type): the HTTP status as the error code.
func errHTTP(status int) *Error {
	return &Error{Status: status, Code: status, Message: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))}
}

// errBadRequest is rest-utils' answer to a body that is not the JSON the
// endpoint takes (JsonParseException / JsonMappingException): 400.
func errBadRequest(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: msg}
}

// errUnprocessable is a bean-validation failure (a missing body): 422.
func errUnprocessable(msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: http.StatusUnprocessableEntity, Message: msg}
}

// javaList formats messages as Java's List.toString does ([a, b]), which is
// how Confluent puts compatibility messages into the 409 message.
func javaList(items []string) string {
	n := 2
	for _, s := range items {
		n += len(s) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, s := range items {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s...)
	}
	return string(append(b, ']'))
}
