#!/bin/sh
# Honours NEO4J_AUTH like the official image: neo4j/<password> sets the initial password once;
# "none" turns authentication off.
set -eu
CP='/opt/neo4j/lib/*'
case "${NEO4J_AUTH:-}" in
  none)
    sed -i 's/^dbms.security.auth_enabled=.*/dbms.security.auth_enabled=false/' "$NEO4J_CONF/neo4j.conf" ;;
  neo4j/*)
    if [ ! -f /data/dbms/auth.ini ]; then
      java -cp "$CP" org.neo4j.cli.AdminTool dbms set-initial-password "${NEO4J_AUTH#neo4j/}"
    fi ;;
esac
exec java -Xms512m -Xmx1g --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
  -cp "$CP" org.neo4j.server.CommunityEntryPoint --home-dir=/opt/neo4j --config-dir="$NEO4J_CONF" --console-mode
