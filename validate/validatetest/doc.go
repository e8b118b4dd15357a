// Package validatetest checks the bounded validation of package validate
// and of validation adapters: a validation stopped at max issues
// (validate.Limited: ValidateLimit, ValidateJSONLimit) must report the
// same count, and so the same details.truncated flag, as the whole
// validation it stands in for, and never an issue the whole one lacks.
// It is for tests, differential and fuzz ones in particular.
package validatetest
