"""What several test files share: a loopback Hub (``fake_hub``), loopback model servers
(``loopback``), a deterministic encoder (``hashing_encoder``), MTEB's evaluators on arrays
(``mteb_reference``), reference loops and ChemBench cases. Nothing here is a test."""
