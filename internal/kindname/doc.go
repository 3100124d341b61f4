// Package kindname names the limiter kinds, their families and the server
// quota kinds as a scenario and the results write them. The kinds tables
// (models.Kinds, upstream.QuotaKinds) declare each kind under one of these
// names; code that must name a kind outside its table, such as a report's
// remedy that switches a limiter's kind, uses the same constant, so that
// no kind's name is spelt twice. It imports nothing, so every package,
// the report included, may use it.
package kindname
