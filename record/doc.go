// Package record keeps the tamper-evident conversation record a bank must keep.
package record
