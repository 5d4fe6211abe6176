package search

import "syscall"

// mapPopulate maps every page at once (one fault instead of one per page).
const mapPopulate = syscall.MAP_POPULATE
