package s3server

// BinaryEnv overrides where the versitygw binary is looked up, for runs outside the repository.
const BinaryEnv = "VERSITYGW_BIN"
