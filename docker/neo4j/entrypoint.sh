#!/bin/sh
# Honours NEO4J_AUTH like the official image: neo4j/<password> sets the initial password once;
# "none" turns authentication off. Like the official image too, NEO4J_<setting> variables set
# neo4j.conf settings, `_` standing for `.` and `__` for `_`
# (NEO4J_browser_post__connect__cmd sets browser.post_connect_cmd).
set -eu
CP='/opt/neo4j/lib/*'
JAVA="$JAVA_HOME/bin/java"
CONF="$NEO4J_CONF/neo4j.conf"
case "${NEO4J_AUTH:-}" in
  none)
    sed -i 's/^dbms.security.auth_enabled=.*/dbms.security.auth_enabled=false/' "$CONF" ;;
  neo4j/*)
    if [ ! -f /data/dbms/auth.ini ]; then
      "$JAVA" -cp "$CP" org.neo4j.cli.AdminTool dbms set-initial-password "${NEO4J_AUTH#neo4j/}"
    fi ;;
esac
# Settings are lower case after the prefix, which leaves out NEO4J_AUTH, NEO4J_HOME and NEO4J_CONF.
env | grep '^NEO4J_[a-z]' | while IFS='=' read -r name value; do
  key=$(echo "${name#NEO4J_}" | sed 's/_/./g; s/\.\./_/g')
  grep -v "^$key=" "$CONF" > "$CONF.new" || true
  printf '%s=%s\n' "$key" "$value" >> "$CONF.new"
  mv "$CONF.new" "$CONF"
done
# The flags of graphsvc/devstack/neo4j.py's JVM_FLAGS (jdk.incubator.vector: Lucene's SIMD vector search).
exec "$JAVA" -Xms512m -Xmx1g --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
  --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  -cp "$CP" org.neo4j.server.Neo4jCommunity --home-dir=/opt/neo4j --config-dir="$NEO4J_CONF" --console-mode
