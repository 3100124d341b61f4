// Package slab holds values in reusable slots named by handles that carry
// the slot's generation, so a stale handle (an event for a request that has
// since ended, a ticket of a waiter that left) never reaches the slot's next
// occupant. It serves the limiters' per-waiter state and the client model's
// requests; it imports nothing of the project.
package slab
