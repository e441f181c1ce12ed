/* remote_stats_sql.h - datasets_remote_stats(): what remote reading cost
 * this process, one row per endpoint (core/remote_stats.h), so that a slow
 * query can be understood. datasets_remote_stats('reset') gives the rows
 * and zeroes the counters. */
#ifndef DS_REMOTE_STATS_SQL_H
#define DS_REMOTE_STATS_SQL_H

#include "sql/sqlite_api.h"

/* Register the eponymous table datasets_remote_stats on db. */
int ds_remote_stats_register(sqlite3 *db);

#endif
