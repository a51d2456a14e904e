# Bindings: each language keeps its own fragment beside its code.
-include bindings/js/js.mk
-include bindings/python/python.mk
-include bindings/c/c.mk
-include bindings/rust/rust.mk
