#!/usr/bin/env bash
# Starts PostgreSQL and MariaDB if they are installed but not running, and
# creates the `test` databases. Safe to run again.
set -uo pipefail
up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if ! up 5432 && command -v pg_ctlcluster >/dev/null; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
fi
if ! up 3306 && [ -x /usr/sbin/mariadbd ]; then
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
fi
for _ in $(seq 1 30); do up 5432 && up 3306 && break; sleep 1; done
if command -v psql >/dev/null; then
  psql -h 127.0.0.1 -U postgres -tc "SELECT 1 FROM pg_database WHERE datname='test'" 2>/dev/null | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE test" >/dev/null 2>&1 || true
fi
if command -v mariadb >/dev/null; then
  mariadb -h 127.0.0.1 -u root -e "CREATE DATABASE IF NOT EXISTS test" >/dev/null 2>&1 || true
fi
up 5432 && echo "PostgreSQL is up" || echo "PostgreSQL is NOT up"
up 3306 && echo "MariaDB is up" || echo "MariaDB is NOT up"
