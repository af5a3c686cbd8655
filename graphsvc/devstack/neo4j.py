"""Neo4j 2026.09 Community with Neo4j Browser, run from Maven Central jars on a Java 21 or later.

The embedded default for a machine with no Docker: `fetch` brings the server and Browser jars into a
cache folder once, `start` finds a Java runtime new enough (`find_java`), writes a config, sets the
initial password, starts the server on 127.0.0.1 and waits (bounded) until it answers; `stop` ends it
by pid.

    python -m graphsvc.devstack.neo4j fetch|java|start|stop [--home DIR] [--bolt-port N] [--http-port N]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from graphsvc.config import CACHE_DIR, Settings
from graphsvc.devstack.process import alive, port_free, spawn, terminate

NEO4J_VERSION = "2026.09.0"
BROWSER_VERSION = "5.24.0"  # the newest Browser jar Maven Central serves
JAVA_MIN = 21  # the 2025+ series runs on Java 21 or later
MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
ADMIN_CLASS = "org.neo4j.cli.AdminTool"
# --add-modules: Lucene's SIMD vector search (the JVM warns once that the module is incubating);
# --enable-native-access: JNA loads a native library (else newer JVMs warn). docker/neo4j/entrypoint.sh
# passes the same.
JVM_FLAGS = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-modules=jdk.incubator.vector",
    "--enable-native-access=ALL-UNNAMED",
)
JVM_DIR = Path("/usr/lib/jvm")
ARTIFACTS = (
    ("org.neo4j", "neo4j", NEO4J_VERSION),
    ("org.neo4j.app", "neo4j-server", NEO4J_VERSION),
    ("org.neo4j.client", "neo4j-browser", BROWSER_VERSION),
)
# The version that wrote a home's data, recorded in it from this version on; a home with data and no
# record was written by the one before, which upgrades in place and one way (README: Run it).
VERSION_FILE = "neo4j.version"
UNRECORDED_VERSION = "5.26.31"
READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0


class DevstackError(RuntimeError):
    """A local service could not be fetched, started or stopped."""


def cache_dir(root: Path = CACHE_DIR) -> Path:
    """This version's folder in `root` (Settings.cache_dir, GRAPHSVC_CACHE_DIR)."""
    return root / f"neo4j-{NEO4J_VERSION}"


def fetch(cache: Path = CACHE_DIR) -> Path:
    """Download the Neo4j server and Browser jars from Maven Central once, into `cache`; return the lib folder."""
    lib = cache_dir(cache) / "lib"
    marker = cache_dir(cache) / ".complete"
    if marker.exists():
        return lib
    if shutil.which("mvn") is None:
        raise DevstackError("Maven (mvn) is needed to fetch Neo4j from Maven Central")
    deps = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v in ARTIFACTS
    )
    pom = (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>graphsvc</groupId><artifactId>neo4j-dist</artifactId><version>1</version>"
        f"<packaging>pom</packaging><dependencies>{deps}</dependencies></project>"
    )
    cache_dir(cache).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "pom.xml").write_text(pom)
        staging = Path(work) / "lib"
        print(
            f"fetching Neo4j {NEO4J_VERSION} + Browser {BROWSER_VERSION} from Maven Central…", file=sys.stderr
        )
        done = subprocess.run(
            ["mvn", "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={staging}"],
            cwd=work,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise DevstackError(f"mvn failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        shutil.rmtree(lib, ignore_errors=True)
        shutil.move(str(staging), lib)
    marker.write_text(f"{len(list(lib.glob('*.jar')))} jars\n")
    return lib


def _java_major(home: Path) -> int | None:
    """The feature release of the Java runtime in `home` (25 for 25.0.3, 8 for 1.8.0), from its
    `release` file, else from `java -version`; None if `home` holds no runnable java."""
    java = home / "bin" / "java"
    if not java.is_file():
        return None
    release = home / "release"
    text = release.read_text(errors="replace") if release.is_file() else ""
    if "JAVA_VERSION=" not in text:
        try:
            text = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
        except (OSError, subprocess.TimeoutExpired):
            return None
    match = re.search(r'(?:JAVA_VERSION=|version )"(\d+)(?:\.(\d+))?', text)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def find_java(java_home: Path | None = None) -> Path:
    """The `java` executable to run Neo4j with: `java_home`'s if given (it must be Java JAVA_MIN or
    later), else JAVA_HOME's if it is Java JAVA_MIN+, else the newest Java JAVA_MIN+ of the `java` on PATH
    and JVM_DIR's runtimes.

    Raises:
        DevstackError: no Java JAVA_MIN or later was found; says what was found and what to do.
    """
    if java_home is not None:
        candidates = [java_home]
    else:
        on_path = shutil.which("java")
        candidates = [
            *([Path(os.environ["JAVA_HOME"])] if os.environ.get("JAVA_HOME") else []),
            *([Path(on_path).resolve().parent.parent] if on_path else []),
            *(sorted(JVM_DIR.iterdir()) if JVM_DIR.is_dir() else []),
        ]
    found = {home.resolve(): _java_major(home) for home in candidates}
    usable = [home for home, major in found.items() if major and major >= JAVA_MIN]
    if usable:
        first = candidates[0].resolve()
        chosen = first if first in usable else max(usable, key=lambda home: found[home] or 0)
        return chosen / "bin" / "java"
    seen = ", ".join(f"{home} (Java {major})" for home, major in found.items() if major) or "none"
    where = java_home or f"JAVA_HOME, PATH and {JVM_DIR}"
    raise DevstackError(
        f"Neo4j {NEO4J_VERSION} needs Java {JAVA_MIN} or later; Java runtimes in {where}: {seen}. "
        f"Install one (e.g. a Temurin {JAVA_MIN}+ JDK under {JVM_DIR}) or point JAVA_HOME at it"
    )


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def keep_before_upgrade(home: Path) -> Path | None:
    """Before NEO4J_VERSION first opens data written by an older Neo4j (which it upgrades in place, one
    way): a copy of that data beside it, `data-<older version>`, once; returns the copy's path.

    Raises:
        DevstackError: the data was written by a newer Neo4j, which this one cannot open.
    """
    if not (home / "data" / "databases").is_dir():
        return None
    marker = home / VERSION_FILE
    written_by = marker.read_text().strip() if marker.exists() else UNRECORDED_VERSION
    if written_by == NEO4J_VERSION:
        return None
    if _release(written_by) > _release(NEO4J_VERSION):
        raise DevstackError(
            f"{home / 'data'} was written by Neo4j {written_by}, which Neo4j {NEO4J_VERSION} cannot open: "
            f"run the graphsvc that started it, or move that folder away to start afresh"
        )
    copy = home / f"data-{written_by}"
    if not copy.exists():
        print(
            f"Neo4j {NEO4J_VERSION} upgrades {home / 'data'} (written by Neo4j {written_by}) in place, "
            f"one way; a copy of it as it was: {copy}",
            file=sys.stderr,
        )
        shutil.copytree(home / "data", copy)
    return copy


@dataclass(frozen=True)
class LocalNeo4j:
    home: Path
    bolt_port: int
    http_port: int
    pid: int

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/browser/?dbms=neo4j://neo4j@127.0.0.1:{self.bolt_port}"


def _write_conf(
    home: Path, bolt_port: int, http_port: int, heap: str, pagecache: str, extra: Mapping[str, str]
) -> None:
    (home / "conf").mkdir(parents=True, exist_ok=True)
    (home / "conf" / "neo4j.conf").write_text(
        "\n".join(
            [
                "server.default_listen_address=127.0.0.1",
                f"server.bolt.listen_address=:{bolt_port}",
                f"server.http.listen_address=:{http_port}",
                f"server.bolt.advertised_address=127.0.0.1:{bolt_port}",
                f"server.http.advertised_address=127.0.0.1:{http_port}",
                "server.https.enabled=false",
                "server.directories.data=data",
                "server.directories.logs=logs",
                "server.memory.heap.initial_size=512m",
                f"server.memory.heap.max_size={heap}",
                f"server.memory.pagecache.size={pagecache}",
                "dbms.security.auth_enabled=true",
                "dbms.usage_report.enabled=false",
                "client.allow_telemetry=false",
                *(f"{key}={value}" for key, value in extra.items()),
                "",
            ]
        )
    )


def _java_env(home: Path) -> dict[str, str]:
    return {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except urllib.error.HTTPError as e:  # 2026.x answers before it is ready: close what it sent
        e.close()
        return False
    except OSError:
        return False


def start(
    home: Path,
    *,
    bolt_port: int = 7687,
    http_port: int = 7474,
    password: str,
    heap: str = "1g",
    pagecache: str = "512m",
    conf: Mapping[str, str] | None = None,
    cache: Path = CACHE_DIR,
    java_home: Path | None = None,
) -> LocalNeo4j:
    """Start Neo4j from `home` (created if missing) and wait until it answers; idempotent. `heap` and
    `pagecache` are Neo4j memory sizes ("1g", "512m"); benchmarks of large graphs raise them. `conf`
    adds neo4j.conf settings (e.g. graphsvc.browser.neo4j_settings). `java_home` picks the Java runtime
    (default: `find_java`'s search).

    Raises:
        DevstackError: the server did not answer within READY_TIMEOUT_S or exited.
    """
    home = home.resolve()
    pid_file = home / "neo4j.pid"
    if pid_file.exists() and alive(int(pid_file.read_text())):
        return LocalNeo4j(home, bolt_port, http_port, int(pid_file.read_text()))
    busy = [port for port in (bolt_port, http_port) if not port_free(port)]
    if busy:
        raise DevstackError(f"port {busy[0]} is in use: stop what listens there or pick other ports")
    java = str(find_java(java_home))
    keep_before_upgrade(home)
    lib = fetch(cache)
    _write_conf(home, bolt_port, http_port, heap, pagecache, conf or {})
    (home / "logs").mkdir(exist_ok=True)
    classpath = f"{lib}/*"
    if not (home / "data" / "dbms" / "auth.ini").exists():
        done = subprocess.run(
            [java, "-cp", classpath, ADMIN_CLASS, "dbms", "set-initial-password", password],
            env=_java_env(home),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:  # e.g. a password shorter than 8 characters
            raise DevstackError(
                f"setting the initial password failed: {(done.stderr or done.stdout).strip()[-500:]}"
            )
    command = [
        java,
        "-Xms512m",
        f"-Xmx{heap}",
        *JVM_FLAGS,
        "-cp",
        classpath,
        MAIN_CLASS,
        f"--home-dir={home}",
        f"--config-dir={home / 'conf'}",
        "--console-mode",
    ]
    with open(home / "logs" / "console.log", "ab") as log:
        process = spawn(command, cwd=home, env=_java_env(home), stdout=log, stderr=subprocess.STDOUT)
    pid_file.write_text(str(process.pid))
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DevstackError(
                f"Neo4j exited with {process.returncode}; see {home / 'logs' / 'console.log'}"
            )
        if _answers(f"http://127.0.0.1:{http_port}/"):
            (home / VERSION_FILE).write_text(NEO4J_VERSION + "\n")
            return LocalNeo4j(home, bolt_port, http_port, process.pid)
        time.sleep(0.5)
    stop(home)
    raise DevstackError(
        f"Neo4j did not answer within {READY_TIMEOUT_S:.0f}s; see {home / 'logs' / 'console.log'}"
    )


def stop(home: Path) -> bool:
    """Stop the server started from `home`; True if one was running."""
    pid_file = home.resolve() / "neo4j.pid"
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text())
    pid_file.unlink()
    return terminate(pid, STOP_TIMEOUT_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphsvc.devstack.neo4j", description=__doc__)
    parser.add_argument("action", choices=["fetch", "java", "start", "stop"])
    parser.add_argument("--home", type=Path, default=Path("var/neo4j"))
    parser.add_argument("--bolt-port", type=int, default=7687)
    parser.add_argument("--http-port", type=int, default=7474)
    settings = Settings()
    parser.add_argument("--password", default=settings.neo4j.password.get_secret_value())
    parser.add_argument(
        "--java-home", type=Path, help=f"a Java {JAVA_MIN}+ runtime (default: find_java's search)"
    )
    args = parser.parse_args(argv)
    try:
        return _act(args)
    except DevstackError as e:
        print(f"{parser.prog}: {e}", file=sys.stderr)
        return 1


def _act(args: argparse.Namespace) -> int:
    if args.action == "fetch":
        print(fetch(Settings().cache_dir))
    elif args.action == "java":
        print(find_java(args.java_home))
    elif args.action == "start":
        server = start(
            args.home,
            bolt_port=args.bolt_port,
            http_port=args.http_port,
            password=args.password,
            cache=Settings().cache_dir,
            java_home=args.java_home,
        )
        print(f"Neo4j {NEO4J_VERSION} pid {server.pid}: {server.bolt_uri}  Browser {server.browser_url}")
    else:
        print("stopped" if stop(args.home) else "not running")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
