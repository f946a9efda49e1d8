# Shared by the bench/*.sh scripts that measure a store in PostgreSQL: a
# throwaway cluster. Sourced, never run (so not a *.sh: bench_test.go runs
# those). The script defines die() first.
#
# The cluster is started with Debian's initdb and pg_ctl (as the postgres
# user when run as root), listening only on a unix socket in the script's
# temporary directory, with the package's default settings (fsync on, as
# SQLite syncs its WAL on every commit). The script calls pg_stop from its
# exit trap, before it removes that directory.

# pg_find: sets pgbin, the newest PostgreSQL server installed, or dies.
pg_find() {
	pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
	[ -n "$pgbin" ] && [ -x "$pgbin/initdb" ] || die "no PostgreSQL server in /usr/lib/postgresql/*/bin (apt-get install postgresql)"
}

# pg_start DIR: starts a cluster in DIR/pg, its socket in DIR (which, run
# as root, is given to the postgres user), its log DIR/pg.log.
pg_as=()
pg_dir=
pg_start() {
	pg_dir=$1
	[ -n "${pgbin:-}" ] || pg_find
	if [ "$(id -u)" = 0 ]; then
		id postgres >/dev/null 2>&1 || die "no postgres user to run the server as (apt-get install postgresql creates it)"
		pg_as=(runuser -u postgres --)
		chown postgres: "$pg_dir"
	fi
	"${pg_as[@]}" "$pgbin/initdb" -D "$pg_dir/pg" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
	"${pg_as[@]}" "$pgbin/pg_ctl" -D "$pg_dir/pg" -l "$pg_dir/pg.log" -w -o "-k $pg_dir -c listen_addresses=" start >/dev/null
	pg_up=1
}

# pg_stop: stops the cluster pg_start started, if it did; safe to call
# from an exit trap at any point.
pg_up=
pg_stop() {
	[ -z "$pg_up" ] || "${pg_as[@]}" "$pgbin/pg_ctl" -D "$pg_dir/pg" -m fast -w stop >/dev/null 2>&1 || true
	pg_up=
}

# pg_createdb NAME: a new database in the cluster.
pg_createdb() { "$pgbin/createdb" -h "$pg_dir" -U postgres "$1"; }

# pg_url NAME: the store URL of database NAME in the cluster.
pg_url() { echo "postgres://postgres@/$1?host=$pg_dir"; }

# pg_version: the server's version line.
pg_version() { "$pgbin/postgres" --version; }
