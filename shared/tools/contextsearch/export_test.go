package contextsearch

// The answer's types, for the tests that decode it.
type (
	Result = resultJSON
	Output = searchOutput
)
