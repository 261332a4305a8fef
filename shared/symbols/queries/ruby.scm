; Ruby. From tree-sitter-ruby's tags.scm (definitions only), with
; constants. A method in a class (or in its `class << self`) is a method,
; one in a module or at the top level a function.

(class name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.class
(module name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.module

(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.method
(alias name: (_) @name) @definition.function

(assignment left: (constant) @name) @definition.constant

(block) @local
(do_block) @local
(lambda) @local
