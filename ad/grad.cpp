// placeholder until this layer is written
