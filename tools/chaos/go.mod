module github.com/strata/strata/tools/chaos

go 1.26

require github.com/anishathalye/porcupine v1.3.1
