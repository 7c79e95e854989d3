package capstan

// OAuthHandles returns how many mounts' OAuth hooks capstan has not
// released yet, and how many releases found theirs released already.
func OAuthHandles() (live, doubleDestroys int64) {
	return oauthLive.Load(), oauthDoubleDestroys.Load()
}

// InputHandles returns how many mounts' input hooks capstan has not
// released yet, and how many releases found theirs released already.
func InputHandles() (live, doubleDestroys int64) {
	return inputLive.Load(), inputDoubleDestroys.Load()
}

// JournalStores returns how many host journal stores capstan has not
// released yet, and how many releases found theirs released already.
func JournalStores() (live, doubleDestroys int64) {
	return journalStoresLive.Load(), journalStoreDoubleDestroys.Load()
}
