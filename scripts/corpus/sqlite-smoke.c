/* Smoke run of SQLite for `make corpus`: an in-memory database, a table of generated rows,
 * an index, joins, aggregates, window functions and floating-point math; prints each query's
 * rows. */
#include <stdio.h>
#include "sqlite3.h"

static int print_row(void *unused, int n, char **values, char **names) {
    (void)unused;
    (void)names;
    for (int i = 0; i < n; i++) printf("%s%s", i ? "|" : "", values[i] ? values[i] : "NULL");
    printf("\n");
    return 0;
}

int main(void) {
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 1;
    const char *sql[] = {
        "CREATE TABLE t(id INTEGER PRIMARY KEY, g INTEGER, x REAL, s TEXT);",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
        "INSERT INTO t SELECT i, i % 37, (i * 7919 % 10007) / 3.0, printf('s%05d', i * 31 % 20000) FROM n;",
        "CREATE INDEX t_g ON t(g, x);",
        "SELECT g, count(*), printf('%.6f', sum(x)), printf('%.6f', avg(x)), min(s), max(s) FROM t GROUP BY g ORDER BY g LIMIT 10;",
        "SELECT a.g, count(*) FROM t a JOIN t b ON a.id = b.id + 1 AND a.g = (b.g + 1) % 37 GROUP BY a.g ORDER BY 2 DESC, 1 LIMIT 5;",
        "SELECT id, printf('%.4f', x), rank() OVER (PARTITION BY g ORDER BY x DESC) AS r FROM t WHERE g = 5 ORDER BY r, id LIMIT 8;",
        "SELECT printf('%.6f', sum(x * x) / count(*) - avg(x) * avg(x)) FROM t;",
        "SELECT s FROM t WHERE s LIKE 's1%7' ORDER BY s LIMIT 5;",
        "DELETE FROM t WHERE id % 3 = 0; SELECT count(*), total(g) FROM t;",
    };
    for (size_t k = 0; k < sizeof sql / sizeof *sql; k++) {
        char *err = NULL;
        if (sqlite3_exec(db, sql[k], print_row, NULL, &err) != SQLITE_OK) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
    }
    sqlite3_close(db);
    return 0;
}
