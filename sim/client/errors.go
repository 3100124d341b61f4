package client

import "errors"

// ErrConfig is wrapped by every error about a Config that cannot be built.
var ErrConfig = errors.New("client: invalid configuration")

// ErrLiveStore is wrapped by every error about the store a live run's
// cluster limiters need: redis-server not installed, or a Redis that
// does not answer at the address given.
var ErrLiveStore = errors.New("client: the live store cannot be used")

// ErrLiveServer is wrapped by every error about a server a live run
// starts in front of its loopback server (nginx): one that does not
// start, exits, or does not listen.
var ErrLiveServer = errors.New("client: the live server cannot be used")
