"""The anchor contract: its source, compiled artifact and toolchain (installed as graphsvc.contracts)."""
