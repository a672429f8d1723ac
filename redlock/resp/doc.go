// Package resp holds Redis commands and replies as values: what a lock client sends, what a
// Redis node (the simulated one in package model, or a real redis-server behind
// redlock/redisdriver) answers, and how both print in redis-cli syntax. It is its own package,
// below every lock algorithm and the Redis model alike, so that the node model serves any
// lock client and no algorithm's package is welded into the network's messages.
package resp
