package store

import "errors"

// ErrInvalidRun is returned (wrapped) by SaveRun for a run no store would
// take as it is (no id, an unknown status, a metric that is not a finite
// number): the store refuses the run itself, not for want of a place.
var ErrInvalidRun = errors.New("run cannot be stored as it is")

// invalidRun is a validation error that reads as itself and is
// ErrInvalidRun to errors.Is.
type invalidRun struct{ err error }

func (e invalidRun) Error() string        { return e.err.Error() }
func (e invalidRun) Unwrap() error        { return e.err }
func (e invalidRun) Is(target error) bool { return target == ErrInvalidRun }

// Refused says whether err is a store refusing a run itself (its id or
// its imported input already stored, or the run invalid), as opposed to
// failing to store it (unreachable, read-only, full, damaged).
func Refused(err error) bool {
	return errors.Is(err, ErrExists) || errors.Is(err, ErrDuplicateInput) || errors.Is(err, ErrInvalidRun)
}
