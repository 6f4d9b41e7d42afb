"""Result files (MTEB layout) and their aggregation."""

from .io import NO_REVISION, model_dir, write_json_atomic

__all__ = ["NO_REVISION", "model_dir", "write_json_atomic"]
