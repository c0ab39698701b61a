// Imported before the libraries: with NODE_ENV other than 'production', @voltagent/core starts
// refreshing a model registry from the network when it is imported, which a benchmark must not
// wait on or print about. 'production' is also the setting a deployed application runs with.
process.env.NODE_ENV = 'production';
