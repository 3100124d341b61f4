// Package upstream models the servers a client calls: latency
// distributions, a server-side quota checked when a request starts (429
// with Retry-After when it is exceeded), an optional pool of server
// workers, and one quota shared by every client instance.
//
// It builds its quotas from the limiter cores in models and imports no
// engine, file format or report package.
package upstream
