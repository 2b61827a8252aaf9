pub struct ObjectWriter {}
