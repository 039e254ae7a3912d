"""What the tests share: messages and expected bytes (``wire``), servers run as processes (``serverproc``,
``httpserver``), HTTP exchanges (``httpwire``), the contract's model (``oracle``), the real clients' checks
(``clients``), the conformance suite's runner (``conformance``) and the fuzzer (``fuzz_engine``)."""
