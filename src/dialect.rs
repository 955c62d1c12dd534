//! The mongosh dialect: a documented subset of what learners type in mongosh,
//! parsed and evaluated through the official `mongodb` driver.
