/**
 * Strata, a persistent ordered key-value store (an LSM tree), from Java.
 *
 * <p>Start with {@link io.strata.Strata#open(String, io.strata.Options)}. Every class that
 * holds native state ({@link io.strata.Strata}, {@link io.strata.ColumnFamily}, {@link
 * io.strata.Snapshot}, {@link io.strata.WriteBatch}, {@link io.strata.StrataIterator}, {@link
 * io.strata.Transaction}, {@link io.strata.TransactionCursor}, {@link io.strata.BackupEngine})
 * is {@link java.lang.AutoCloseable}: close it when done; a call after close throws {@link
 * io.strata.UnavailableException}, and what is never closed is freed once unreachable.
 * Failures are {@link io.strata.StrataException}s, one subclass per {@link
 * io.strata.ErrorKind}.
 */
package io.strata;
