package client

import "errors"

// ErrConfig is wrapped by every error about a Config that cannot be built.
var ErrConfig = errors.New("client: invalid configuration")
