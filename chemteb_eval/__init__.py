"""chemteb-eval: evaluate text embedding models on chemistry (ChemTEB)."""

__version__ = "0.1.0"
