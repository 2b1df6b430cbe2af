// Helpers for SQLite macros that do not import into Swift.
#ifndef CARTOGRAPH_CSQLITE_SHIM_H
#define CARTOGRAPH_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a function-pointer cast in a macro: Swift cannot see it.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
